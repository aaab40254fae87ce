// The one place to adapt the mcp-readiness mixin to a Prometheus set-up. Override with
//   (import 'mixin.libsonnet') + { _config+:: { groupLabels: ['cluster'], ... } }
// or, for the rendered files, scripts/render-mixin --config '{"groupLabels": ["cluster"]}'.
{
  _config+:: {
    // Extra label matchers for every mcp_readiness_* series the rules read, e.g.
    // 'namespace="agents"'. Empty: every series (the metric names are the project's own).
    selector: '',
    // The scrape jobs whose targets are mcp-readiness exporters (`serve` or a service with the
    // ReadinessLayer): their `up` says down / never up, their absence from discovery is an alert.
    exporterSelector: 'job=~"mcp-readiness.*"',
    // Labels that, with `job` and `server`, name the workload that owns a server: alerts and
    // fleet rules aggregate by them, so replacing a replica neither resolves nor re-fires a page.
    // Labels missing from a set-up are empty and harmless (Kubernetes adds cluster / namespace).
    groupLabels: ['cluster', 'namespace'],
    // Labels of one replica (one scrape target), listed in descriptions and used by the
    // per-replica alerts (exporter down, configuration reload, no server).
    replicaLabels: ['instance', 'pod'],

    // Where the runbook lives: `%s` is the alert name in lower case (GitHub's anchors).
    runbookURLPattern: 'https://github.com/mcp-readiness/mcp-readiness/blob/main/docs/runbook.md#%s',
    // Grafana's base URL for the `dashboard_url` annotation; empty: no such annotation.
    grafanaURL: 'http://localhost:3000',
    dashboardUIDs: { fleet: 'mcp-readiness-fleet', server: 'mcp-readiness-server' },
    // The PrometheusRule manifest (Prometheus Operator): its name and the labels your
    // Prometheus' ruleSelector picks.
    prometheusRuleName: 'mcp-readiness',
    prometheusRuleLabels: { 'app.kubernetes.io/name': 'mcp-readiness', role: 'alert-rules' },
    // Dashboard refresh and default time range.
    dashboardRefresh: '30s',
    dashboardTimeFrom: 'now-6h',

    // --- thresholds and windows ---------------------------------------------------------
    // A state seen at least once within this window still counts: one blip of another state
    // (an exporter restart, one odd scrape) neither resolves nor restarts a state alert.
    stateBlipWindow: '3m',
    // Evidence windows: failed connects and refused calls this recent make `absent` worth a
    // page; a calls-refused count in it makes a state alert critical.
    evidenceWindow: '1h',
    // Crash loop: this many reconnects, or entries into `absent`, within the window.
    crashLoopWindow: '10m',
    crashLoopRestarts: 3,
    // Calls to a tool the ready server does not offer count for this long (a tool called once
    // per scheduled run still raises MCPToolAbsent).
    toolAbsentWindow: '2h',
    budgetExhaustedWindow: '10m',
    // MCPToolCallsFailing: failed share of calls to a ready server, and the minimum calls.
    callFailureWindow: '10m',
    callFailureRatio: 0.5,
    callFailureMinCalls: 3,
    // MCPCredentialExpiringSoon: warning this many days ahead, critical within these hours.
    credentialExpiryWarningDays: 7,
    credentialExpiryCriticalHours: 24,
    // Matchers for the credential expiry gauge: only credentials that cannot renew themselves
    // (`renewable="false"`: a refresh token with a stated lifetime, an access token without a
    // refresh token, a static bearer JWT's `exp`) page; an OAuth access token that refreshes
    // itself (`renewable="true"`) never does.
    credentialExpirySelector: 'renewable="false"',

    // `for` of each alert (the live test renders short ones).
    'for': {
      MCPServerUnauthenticated: '5m',
      MCPServerAbsent: '10m',
      MCPToolAbsent: '1m',
      MCPResolveBudgetExhausted: '10m',
      MCPCredentialExpiringSoon: '10m',
      MCPToolCallsFailing: '10m',
      MCPWaitBudgetBelowConnectTime: '30m',
      MCPReadinessExporterDown: '2m',
      MCPReadinessExporterAbsent: '10m',
      MCPReadinessConfigReloadFailed: '1m',
      MCPReadinessNoServers: '10m',
    },
  },
}

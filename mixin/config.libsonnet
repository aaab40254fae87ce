// The one place to adapt the mcp-readiness mixin to a Prometheus set-up. Override with
//   (import 'mixin.libsonnet') + { _config+:: { groupLabels: ['cluster'], ... } }
// or, for the rendered files, scripts/render-mixin --config '{"groupLabels": ["cluster"]}'.
{
  _config+:: {
    // Extra label matchers for every mcp_readiness_* series the rules read, e.g.
    // 'namespace="agents"'. Empty: every series (the metric names are the project's own).
    selector: '',
    // The exporter alerts see every scrape target that exports `mcp_readiness_build_info` (`serve`
    // or an agent service with the Metrics recorder), whatever its job is called. This selector
    // adds the targets of these jobs even before their first successful scrape (a target that
    // was never up has no build_info yet); '' for none.
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
    // A replica's last reported state (and its build info) counts for this long after its last
    // scrape, so a missed scrape neither hides nor invents a state; a replica gone from service
    // discovery stops counting after it (one whose exporter is down keeps it until it is back).
    stateStaleWindow: '3m',
    // Evidence window: failed connects this recent make `absent` worth an alert.
    evidenceWindow: '1h',
    // Calls refused as not ready within this window make `absent` worth an alert and a state
    // alert critical: it covers a step run hourly or daily, so such a page stays one incident
    // between runs instead of firing, resolving and firing again each run.
    refusedWindow: '25h',
    // Crash loop, by the supervisor's own judgement: within the window, this many entries into
    // `absent` (its crash-loop backoff) with as many successful handshakes, or this many
    // reconnects with calls failing in transport. Healthy reconnects (an idle connection a
    // proxy drops) and a planned restart that ended raise nothing.
    crashLoopWindow: '10m',
    crashLoopRestarts: 3,
    // A server that reads `connecting` for this long while its handshakes fail (throttled with
    // 429/503 + Retry-After, or unreachable) is absent: a bigger wait budget cannot help.
    stuckConnectingWindow: '30m',
    // Calls to a tool the ready server does not offer count for this long (a tool called once
    // per scheduled run still raises MCPToolAbsent).
    toolAbsentWindow: '2h',
    // Resolutions that ran out of budget count for this long: it spans runs (one exhaustion per
    // hourly run is one alert, not none, nor a new one every hour), as toolAbsentWindow does.
    budgetExhaustedWindow: '2h',
    // MCPToolCallsFailing: failed share (transport errors, timeouts) of the calls to a ready
    // server, or its share of `isError` results (its backend is down), and the minimum calls in
    // the window (an hour counts a step called every 15 minutes).
    callFailureWindow: '1h',
    callFailureRatio: 0.5,
    callToolErrorRatio: 0.9,
    callFailureMinCalls: 3,
    // MCPCredentialExpiringSoon: warning this many days ahead, critical within these hours.
    credentialExpiryWarningDays: 7,
    credentialExpiryCriticalHours: 24,
    // Matchers for the credential expiry gauge: only credentials that cannot renew themselves
    // (`renewable="false"`: a refresh token with a stated lifetime, an access token without a
    // refresh token, a static bearer JWT's `exp`) page; an OAuth access token that refreshes
    // itself (`renewable="true"`) never does.
    credentialExpirySelector: 'renewable="false"',
    // A credential that renews itself (`renewable="true"`) but whose expiry is this far in the
    // past while the exporter still holds it: its renewal is failing (a warning).
    credentialRenewalOverdueMinutes: 10,

    // Pushed pre-flights (`check --push`): MCPReadinessPreflightStopped warns when the last push
    // is older than this many of its runs' spacing (announced with `--next-run-in`, else the
    // spacing of its last two pushes, else `preflightPeriodSeconds`, for a run seen once).
    preflightMissedRuns: 2,
    preflightPeriodSeconds: 86400,

    // MCPProbeFailing: a `/probe` target whose probes failed (not ready, or no answer within the
    // scrape timeout) at least this share of the time within the window: a flapping target (two
    // probes in three fail) and a hung one alert within minutes.
    probeWindow: '10m',
    probeFailureRatio: 0.5,

    // MCPReadinessAgentStopped: a workload that pushes its metrics (OTLP: no `up`, no staleness
    // markers) and has not reported for `agentSilenceMinutes`; it keeps firing for up to
    // `agentSilenceHoldHours` after its last report (then it is taken as retired).
    agentSilenceMinutes: 10,
    agentSilenceHoldHours: 24,

    // MCPReadinessExporterRestarting: a scraped exporter whose process started this many times
    // within the window (`process_start_time_seconds` changed): a restart loop that `up` misses
    // (it is 0 for one scrape per restart, under MCPReadinessExporterDown's `for`).
    exporterRestartWindow: '15m',
    exporterRestarts: 3,

    // Record the recording-rule names before issue 36 from the new ones (the group
    // `mcp-readiness.deprecated-aliases`; docs/metrics.md): on for this release, so your own
    // dashboards and rules keep working while you move them; the next release removes them.
    // `false` saves their series (87,000 at 1,000 servers x 10 replicas with calls).
    deprecatedAliases: true,

    // How often the budget advisor's group runs (it scans every connect-duration bucket).
    advisorInterval: '3m',

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
      MCPReadinessPreflightStopped: '10m',
      MCPReadinessExporterRestarting: '5m',
      MCPProbeFailing: '2m',
      MCPReadinessAgentStopped: '5m',
    },
  },
}

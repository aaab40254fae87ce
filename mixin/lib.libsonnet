// Helpers shared by the rules, the alerts and the dashboards: selectors, label lists and the
// Go-template snippets that put live figures in an alert's description.
{
  // Variables for `||| ... ||| % vars(cfg)`:
  //   %(s)s  the selector as a whole matcher block ('' or '{namespace="x"}')
  //   %(c)s  the selector to append inside a block (', namespace="x"')
  //   %(w)s  the workload labels (group labels and job), %(ws)s the same plus server
  //   %(r)s  the labels of one replica (workload labels and replica labels)
  //   and the windows and thresholds of _config.
  vars(cfg):: {
    local this = self,
    s: if cfg.selector == '' then '' else '{%s}' % cfg.selector,
    c: if cfg.selector == '' then '' else ', %s' % cfg.selector,
    w: std.join(', ', cfg.groupLabels + ['job']),
    ws: std.join(', ', cfg.groupLabels + ['job', 'server']),
    r: std.join(', ', cfg.groupLabels + ['job'] + cfg.replicaLabels),
    exporter: cfg.exporterSelector,
    blip: cfg.stateBlipWindow,
    stale: cfg.stateStaleWindow,
    stale_secs: $.seconds(cfg.stateStaleWindow),
    // How long a replica that pushes its metrics may be silent before it counts as down: the
    // shorter of the blip and state windows, so that neither its verdicts (which read the blip
    // window) nor its held states (the state window) lapse before the hold takes over.
    silent: if $.seconds(cfg.stateBlipWindow) < $.seconds(cfg.stateStaleWindow)
    then cfg.stateBlipWindow else cfg.stateStaleWindow,
    evidence: cfg.evidenceWindow,
    refused_window: cfg.refusedWindow,
    stuck_window: cfg.stuckConnectingWindow,
    stuck_1m: $.minutes(cfg.stuckConnectingWindow),
    crash_window: cfg.crashLoopWindow,
    crash_restarts: cfg.crashLoopRestarts,
    tool_window: cfg.toolAbsentWindow,
    budget_window: cfg.budgetExhaustedWindow,
    failure_window: cfg.callFailureWindow,
    failure_ratio: cfg.callFailureRatio,
    failure_min: cfg.callFailureMinCalls,
    call_outcomes: 'ok|tool_error|task_failed|input_required|transport_error|timeout',
    tool_error_ratio: cfg.callToolErrorRatio,
    renewal_overdue_secs: cfg.credentialRenewalOverdueMinutes * 60,
    preflight_period: cfg.preflightPeriodSeconds,
    restart_window: cfg.exporterRestartWindow,
    probe_window: cfg.probeWindow,
    silence_secs: cfg.agentSilenceMinutes * 60,
    silence_hold_secs: cfg.agentSilenceHoldHours * 3600,
    probe_ratio: cfg.probeFailureRatio,
    restarts: cfg.exporterRestarts,
    preflight_missed: cfg.preflightMissedRuns,
    // Recording rule names (level:metric:operations, the window in the operation, no `_total`
    // after an increase; a qualifier after the metric names the outcomes selected).
    calls_1h: 'instance_server_outcome:mcp_readiness_tool_calls:increase%s' % cfg.callFailureWindow,
    refused_1m: 'instance_server_tool:mcp_readiness_tool_calls_not_ready:increase1m',
    calls_1m: 'instance_server_outcome:mcp_readiness_tool_calls:increase1m',
    connects_1m: 'instance_server_result:mcp_readiness_connects:increase1m',
    tool_absent_1m: 'instance_server_tool:mcp_readiness_tool_absent:increase1m',
    budget_1m: 'instance_server:mcp_readiness_budget_exhausted:increase1m',
    refused_window_r: 'instance_server:mcp_readiness_tool_calls_not_ready:increase%s' % cfg.refusedWindow,
    refused_held_r: 'instance_server:mcp_readiness_tool_calls_not_ready:held_increase%s' % cfg.refusedWindow,
    refused_s: 'server:mcp_readiness_tool_calls_not_ready:increase%s' % cfg.refusedWindow,
    failed_connects_r: 'instance_server:mcp_readiness_connects_failed:increase%s' % cfg.evidenceWindow,
    crash_loop_r: 'instance_server:mcp_readiness_server_state_changes_absent:increase%s' % cfg.crashLoopWindow,
    tool_absent_r: 'instance_server_tool:mcp_readiness_tool_absent:increase%s' % cfg.toolAbsentWindow,
    tool_absent_s: 'server_tool:mcp_readiness_tool_absent:increase%s' % cfg.toolAbsentWindow,
    budget_r: 'instance_server:mcp_readiness_budget_exhausted:increase%s' % cfg.budgetExhaustedWindow,
    transport_ratio_r: 'instance_server:mcp_readiness_tool_calls_transport_failed_per_calls:ratio_increase%s' % cfg.callFailureWindow,
    error_ratio_r: 'instance_server:mcp_readiness_tool_calls_errored_per_calls:ratio_increase%s' % cfg.callFailureWindow,
    transport_ratio_s: 'server:mcp_readiness_tool_calls_transport_failed_per_calls:max_ratio_increase%s' % cfg.callFailureWindow,
    error_ratio_s: 'server:mcp_readiness_tool_calls_errored_per_calls:max_ratio_increase%s' % cfg.callFailureWindow,
    failed_ratio_s: 'server:mcp_readiness_tool_calls_failed_per_calls:ratio_increase%s' % cfg.callFailureWindow,
    refused_fleet_s: 'server:mcp_readiness_tool_calls_not_ready:increase%s' % cfg.callFailureWindow,
    failed_fleet_s: 'server:mcp_readiness_tool_calls_failed:increase%s' % cfg.callFailureWindow,
    failed_outcomes: 'transport_error|timeout|tool_error|task_failed',
    renewable_s: if cfg.selector == '' then '{renewable="true"}' else '{%s, renewable="true"}' % cfg.selector,
    // A replica whose exporter is down now: a scrape target still discovered with `up` 0, or a
    // replica of a workload that pushes its metrics (OTLP: no `up`, no staleness marker) that is
    // silent (no build info within `stateStaleWindow`, or `stateBlipWindow` if shorter) and whose
    // last report is still held (it stopped within `stateStaleWindow` of the workload's newest
    // report, so replicas that die together a few export intervals apart are all down, not the
    // first ones gone): its pages keep their last state instead of resolving because the agent
    // died, until it reports again or is taken as retired.
    down: |||
      (
        (up == 0)
        or
        (
          instance:mcp_readiness_build_info:last_report
          unless on (%(r)s) last_over_time(mcp_readiness_build_info%(s)s[%(silent)s])
        )
      )
    ||| % { r: this.r, s: this.s, silent: this.silent },
    cred: if cfg.credentialExpirySelector == '' then cfg.selector
    else if cfg.selector == '' then cfg.credentialExpirySelector
    else cfg.selector + ', ' + cfg.credentialExpirySelector,
    cred_s: if self.cred == '' then '' else '{%s}' % self.cred,
    warn_secs: cfg.credentialExpiryWarningDays * 86400,
    crit_secs: cfg.credentialExpiryCriticalHours * 3600,
  },

  // A duration ('15s', '3m', '1h': one number and one of s, m, h, d) in seconds.
  seconds(d)::
    local unit = { s: 1, m: 60, h: 3600, d: 86400 }[d[std.length(d) - 1]];
    std.parseInt(d[0:std.length(d) - 1]) * unit,

  // A window of per-minute samples: the duration `d` ('30m', '1h', '25h': one number and one of
  // s, m, h, d) less one second, in seconds. Prometheus 2 includes both ends of a range, so
  // `x[1h]` over a series recorded every minute holds 61 samples, one minute too many; the
  // range a second shorter holds 60 on Prometheus 2 and 3 alike.
  minutes(d)::
    '%ds' % ($.seconds(d) - 1),

  // A PromQL matcher list for a Go template's printf, naming the alert's own workload and
  // server: `job=%q, server=%q, cluster=%q, ...` plus the arguments `$labels.job ...`. A label
  // the alert lacks is "" in the template, and `cluster=""` matches series without it.
  matcher(cfg, labels):: {
    format: std.join(', ', ['%s=%%q' % l for l in labels]),
    args: std.join(' ', ['$labels.%s' % l for l in labels]),
  },

  // `{{ ... }}` that prints the first value of `expr` (whose `{M}` is replaced by the alert's
  // matchers) with `fmt`, or `otherwise` when the query returns nothing.
  figure(cfg, labels, expr, fmt='%.0f', otherwise='0')::
    local m = self.matcher(cfg, labels);
    '{{ with printf "%s" %s | query }}{{ . | first | value | printf "%s" }}{{ else }}%s{{ end }}'
    % [std.strReplace(expr, '{M}', m.format), m.args, fmt, otherwise],

  // `{{ ... }}` that lists the label `label` of every series of `expr`, sorted, comma-separated.
  // `also` (a label name or ''): printed after each in parentheses where the series has it
  // (the pod of an instance, so the runbook's commands can name each one).
  list(cfg, labels, expr, label, otherwise='none', also='')::
    local m = self.matcher(cfg, labels);
    local extra = if also == '' then '' else '{{ with $s.Labels.%s }} (%s {{ . }}){{ end }}' % [also, also];
    '{{ with printf "%s" %s | query }}{{ range $i, $s := . | sortByLabel "%s" }}{{ if $i }}, {{ end }}{{ $s.Labels.%s }}%s{{ end }}{{ else }}%s{{ end }}'
    % [std.strReplace(expr, '{M}', m.format), m.args, label, label, extra, otherwise],

  // ", cluster c, namespace n" for the group labels the alert has.
  where(cfg)::
    std.join('', ['{{ with $labels.%s }}, %s {{ . }}{{ end }}' % [l, l] for l in cfg.groupLabels]),

  runbook(cfg, alert):: cfg.runbookURLPattern % std.asciiLower(alert),

  dashboard(cfg, server=true)::
    if cfg.grafanaURL == '' then {}
    else {
      dashboard_url: '%s/d/%s?var-job={{ $labels.job }}%s' % [
        cfg.grafanaURL,
        if server then cfg.dashboardUIDs.server else cfg.dashboardUIDs.fleet,
        if server then '&var-server={{ $labels.server }}' else '',
      ],
    },
}

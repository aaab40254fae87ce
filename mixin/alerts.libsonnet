// Alerts, keyed to symptoms with evidence, at the level of the workload that owns a server
// (`job`, `server` and the group labels), so replacing a replica neither resolves nor re-fires
// a page. Only five alerts carry an `action`; for one server at one moment at most one action
// holds: each condition yields to the ones before it (unauthenticated, absent, credential
// expiring, tool absent, budget exhausted). `severity` is `warning` unless calls were actually
// refused (then a `critical` twin fires; alertmanager.example.yml lets it inhibit the warning).
local lib = import 'lib.libsonnet';

{
  prometheusAlerts+:: {
    local cfg = $._config,
    local v = lib.vars(cfg),
    local ws = cfg.groupLabels + ['job', 'server'],
    local w = cfg.groupLabels + ['job'],
    local r = cfg.groupLabels + ['job'] + cfg.replicaLabels,
    local fig(labels, expr, fmt='%.0f', otherwise='0') = lib.figure(cfg, labels, expr, fmt, otherwise),
    local list(expr, label) = lib.list(cfg, ws, expr, label),
    local where = lib.where(cfg),
    local forOf(name) = cfg['for'][name],
    local annotations(name, summary, description, server=true) = {
      summary: summary,
      description: description,
      runbook_url: lib.runbook(cfg, name),
    } + lib.dashboard(cfg, server),

    // The workload conditions, each yielding to the ones before it.
    local U = '(server:mcp_readiness_server_state:unauthenticated_replicas > 0)',
    local A = '(server:mcp_readiness_server_state:absent_replicas > 0)',
    local R = '(server:mcp_readiness_tool_calls_total:refused_recently > 0)',
    local C(secs) = '(((server:mcp_readiness_credential_expiry_timestamp_seconds:min - time()) > 0) < %d)' % secs,
    local T = '(sum by (%(ws)s) (server_tool:mcp_readiness_tool_absent_total:recently) > 0)' % v,
    local B = '(sum by (%(ws)s) (instance_server:mcp_readiness_budget_exhausted_total:recently) > 0)' % v,
    local unless(cond, before) =
      cond + std.join('', ['\nunless on (%s)\n%s' % [v.ws, b] for b in before]) + '\n',
    local critical(cond) = '(\n' + cond + ')\nand on (%s)\n%s\n' % [v.ws, R],

    // "on N of M replicas" for a workload alert whose value is N.
    local replicas = 'on {{ $value | printf "%.0f" }} of '
                     + fig(w, 'job:mcp_readiness_build_info:replicas{{M}}', otherwise='?')
                     + ' replicas',
    local refused = fig(ws, 'server:mcp_readiness_tool_calls_total:refused_recently{{M}}')
                    + ' calls to it were refused as not ready in the last ' + cfg.evidenceWindow,
    local who = '`{{ $labels.server }}` (job {{ $labels.job }}' + where + ')',

    local unauthenticated(severity, expr) = {
      alert: 'MCPServerUnauthenticated',
      // Value: replicas that see the server unauthenticated.
      expr: expr,
      'for': forOf('MCPServerUnauthenticated'),
      labels: { severity: severity, action: 'reauthorize' },
      annotations: annotations(
        'MCPServerUnauthenticated',
        'MCP server `{{ $labels.server }}` needs re-authorization',
        who + ' is unauthenticated ' + replicas
        + ' (' + list('instance_server:mcp_readiness_server_state:unauthenticated{{M}}', 'instance') + '): '
        + 'its credentials are missing, expired or revoked (HTTP 401, or 403 with a challenge), and waiting will not heal it. '
        + refused + '. '
        + 'Next step: re-authorize `{{ $labels.server }}` (a new token in its headers or env, or a new OAuth grant), then reload the exporter (SIGHUP to `serve`, or restart the agent service).',
      ),
    },

    local absent(severity, expr) = {
      alert: 'MCPServerAbsent',
      // Value: replicas with evidence that the server is absent.
      expr: expr,
      'for': forOf('MCPServerAbsent'),
      labels: { severity: severity, action: 'add_connection' },
      annotations: annotations(
        'MCPServerAbsent',
        'MCP server `{{ $labels.server }}` is absent',
        who + ' is absent ' + replicas
        + ' (' + list('instance_server:mcp_readiness_server_state:absent{{M}}', 'instance') + '): '
        + 'it is not configured there, fails to start, exits, or keeps crashing. '
        + 'In the last ' + cfg.evidenceWindow + ' '
        + fig(ws, "sum(instance_server:mcp_readiness_connects_total:failed_recently{{M}})")
        + ' connection attempts failed and '
        + fig(ws, 'server:mcp_readiness_tool_calls_total:refused_recently{{M}}')
        + ' calls were refused; '
        + fig(ws, 'sum(instance_server:mcp_readiness_server_state:crash_loop{{M}})')
        + ' restarts in the last ' + cfg.crashLoopWindow + ' (a crash loop from ' + cfg.crashLoopRestarts + '). '
        + 'Next step: add or repair the `{{ $labels.server }}` connection (command, URL, installation), then reload the exporter.',
      ),
    },

    local credential(severity, secs, before) = {
      alert: 'MCPCredentialExpiringSoon',
      // Value: seconds until the first replica's credential for the server expires.
      expr: unless(C(secs), before),
      'for': forOf('MCPCredentialExpiringSoon'),
      labels: { severity: severity, action: 'reauthorize' },
      annotations: annotations(
        'MCPCredentialExpiringSoon',
        'The credential of MCP server `{{ $labels.server }}` expires in {{ $value | humanizeDuration }}',
        who + ' uses a credential that expires in {{ $value | humanizeDuration }} '
        + '(at {{ with printf "server:mcp_readiness_credential_expiry_timestamp_seconds:min{%s}" %s | query }}{{ . | first | value | humanizeTimestamp }}{{ end }}) '
          % [lib.matcher(cfg, ws).format, lib.matcher(cfg, ws).args]
        + 'and cannot renew itself: when it does, the server reads unauthenticated and its calls are refused. '
        + 'Next step: re-authorize `{{ $labels.server }}` now (a new token, or a new OAuth grant for its credential store), then reload the exporter.',
      ),
    },

    groups+: [
      {
        name: 'mcp-readiness.alerts',
        rules: [
          unauthenticated('critical', critical(U + '\n')),
          unauthenticated('warning', U + '\n'),
          absent('critical', critical(unless(A, [U]))),
          absent('warning', unless(A, [U])),
          credential('critical', v.crit_secs, [U, A]),
          credential('warning', v.warn_secs, [U, A]),
          {
            alert: 'MCPToolAbsent',
            // Value: calls in the tool window that named tools the ready server does not offer.
            expr: unless(T, [U, A, C(v.warn_secs)]),
            'for': forOf('MCPToolAbsent'),
            labels: { severity: 'warning', action: 'add_connection' },
            annotations: annotations(
              'MCPToolAbsent',
              'Calls name tools that MCP server `{{ $labels.server }}` does not offer',
              who + ' is ready, but {{ $value | printf "%.0f" }} calls in the last ' + cfg.toolAbsentWindow
              + ' named tools it does not offer: '
              + list('server_tool:mcp_readiness_tool_absent_total:recently{{M}}', 'tool') + '. '
              + 'Next step: add the connection that offers these tools (or the server version that has them), or fix the tool names the agent calls.',
            ),
          },
          {
            alert: 'MCPResolveBudgetExhausted',
            // Value: resolutions that ran out of budget within the window.
            expr: unless(B, [U, A, C(v.warn_secs), T]),
            'for': forOf('MCPResolveBudgetExhausted'),
            labels: { severity: 'warning', action: 'extend_wait_budget' },
            annotations: annotations(
              'MCPResolveBudgetExhausted',
              'MCP server `{{ $labels.server }}` keeps outrunning its wait budget',
              who + ' takes longer to become ready than callers wait: {{ $value | printf "%.0f" }} resolutions ran out of budget in the last '
              + cfg.budgetExhaustedWindow + ' while it was connecting; connects take '
              + fig(ws, 'server:mcp_readiness_connect_duration_seconds:p95{{M}}', '%.1f s', '(no successful connect yet)')
              + ' at p95 and the budget in force is '
              + fig(ws, 'server:mcp_readiness_wait_budget_seconds:max{{M}}', '%.0f s', 'unknown') + '. '
              + 'Next step: raise `readiness.servers.{{ $labels.server }}.budget`'
              + fig(ws, 'server:mcp_readiness_wait_budget_seconds:suggested{{M}}', ' to about %.0f s', '')
              + ' (it overrides the global `readiness.budget` for this server only; in an agent service, the budget of its ServerSpec / HubOptions), or move its steps later in the run.',
            ),
          },
          {
            alert: 'MCPWaitBudgetBelowConnectTime',
            // Information only: no resolution ran out of budget yet, but a typical connect is
            // longer than the budget. Value: p95 connect time / budget.
            expr: unless(
              '(server:mcp_readiness_connect_duration_seconds:p95 / on (%(ws)s) server:mcp_readiness_wait_budget_seconds:max > 1)' % v,
              [U, A, C(v.warn_secs), T, B]
            ),
            'for': forOf('MCPWaitBudgetBelowConnectTime'),
            labels: { severity: 'info' },
            annotations: annotations(
              'MCPWaitBudgetBelowConnectTime',
              'MCP server `{{ $labels.server }}` connects slower than its wait budget',
              who + ' connects in '
              + fig(ws, 'server:mcp_readiness_connect_duration_seconds:p95{{M}}', '%.1f s', '?')
              + ' at p95, longer than its wait budget of '
              + fig(ws, 'server:mcp_readiness_wait_budget_seconds:max{{M}}', '%.0f s', '?')
              + '; no call has run out of budget yet. If calls start right after a (re)connect, consider `readiness.servers.{{ $labels.server }}.budget`'
              + fig(ws, 'server:mcp_readiness_wait_budget_seconds:suggested{{M}}', ' of about %.0f s', '')
              + ' (the global `readiness.budget` stays the default for the others).',
            ),
          },
          {
            alert: 'MCPToolCallsFailing',
            // A ready server whose calls fail in transport or time out: none of the three
            // actions applies (no `action`). Value: failed share of the calls.
            expr: unless('(server:mcp_readiness_tool_calls_total:failure_ratio > %(failure_ratio)s)' % v, [U, A]),
            'for': forOf('MCPToolCallsFailing'),
            labels: { severity: 'warning' },
            annotations: annotations(
              'MCPToolCallsFailing',
              'Calls to MCP server `{{ $labels.server }}` fail although it is ready',
              who + ' is ready, but {{ $value | humanizePercentage }} of its calls in the last ' + cfg.callFailureWindow
              + ' failed in transport or timed out. The server accepts connections and lists its tools but does not answer calls. '
              + 'Next step: look at the server itself (its logs, load, the backend it calls); restart it if it is frozen.',
            ),
          },
        ],
      },
      {
        name: 'mcp-readiness.exporter',
        rules: [
          {
            alert: 'MCPReadinessExporterDown',
            // A target of the exporter jobs that does not answer, for as long as it lasts
            // (never scraped successfully included).
            expr: 'up{%(exporter)s} == 0\n' % v,
            'for': forOf('MCPReadinessExporterDown'),
            labels: { severity: 'warning' },
            annotations: annotations(
              'MCPReadinessExporterDown',
              'mcp-readiness exporter {{ $labels.instance }} is down',
              'Prometheus cannot scrape {{ $labels.instance }} (job {{ $labels.job }}' + where + '): '
              + fig(w, "count(up{{M}} == 0)") + ' of ' + fig(w, "count(up{{M}})")
              + ' targets of the job are down. The readiness of the MCP servers it reports is unknown (the alerts of its workload read the other replicas). '
              + 'Next step: restart `mcp-readiness serve` (or the agent service) on that instance and check that its /metrics answers.',
              false,
            ),
          },
          {
            alert: 'MCPReadinessExporterAbsent',
            // No target of the exporter jobs in service discovery at all.
            expr: 'absent(up{%(exporter)s})\n' % v,
            'for': forOf('MCPReadinessExporterAbsent'),
            labels: { severity: 'warning' },
            annotations: {
              summary: 'No mcp-readiness exporter is discovered',
              description: 'Prometheus has no scrape target matching `' + cfg.exporterSelector + '`: no readiness of any MCP server is known and no MCP alert can fire. '
                           + 'Next step: check the scrape configuration (static targets, ServiceMonitor / PodMonitor labels) and that the exporters run.',
              runbook_url: lib.runbook(cfg, 'MCPReadinessExporterAbsent'),
            },
          },
          {
            alert: 'MCPReadinessConfigReloadFailed',
            // The last configuration (re)load was refused: the exporter runs the previous one.
            expr: 'last_over_time(mcp_readiness_config_last_reload_successful%(s)s[3m]) == 0\n' % v,
            'for': forOf('MCPReadinessConfigReloadFailed'),
            labels: { severity: 'warning' },
            annotations: annotations(
              'MCPReadinessConfigReloadFailed',
              'mcp-readiness on {{ $labels.instance }} refused its configuration',
              'The last configuration reload of {{ $labels.instance }} (job {{ $labels.job }}' + where + ') failed; it keeps running the configuration it loaded '
              + fig(r, 'time() - mcp_readiness_config_last_reload_success_timestamp_seconds{{M}}', '%.0f', '?')
              + ' seconds ago, so the changes are not in effect. Next step: read the error in its log (it names the file, the JSON path and what was expected), fix the file and reload again.',
              false,
            ),
          },
          {
            alert: 'MCPReadinessNoServers',
            // An exporter that reports no MCP server at all.
            expr: |||
              max without (version) (last_over_time(mcp_readiness_build_info%(s)s[3m]))
              unless on (%(r)s)
              last_over_time(mcp_readiness_server_state%(s)s[3m])
            ||| % v,
            'for': forOf('MCPReadinessNoServers'),
            labels: { severity: 'warning' },
            annotations: annotations(
              'MCPReadinessNoServers',
              'mcp-readiness on {{ $labels.instance }} sees no MCP server',
              '{{ $labels.instance }} (job {{ $labels.job }}' + where + ') exports mcp-readiness metrics but no server state: its configuration has no server, or its Metrics is not the event sink of its Hub. '
              + 'Next step: check `mcpServers` in its configuration (or `HubOptions::builder().event_sink(metrics)` in the service).',
              false,
            ),
          },
        ],
      },
    ],
  },
}

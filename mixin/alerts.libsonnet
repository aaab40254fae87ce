// Alerts, keyed to symptoms with evidence, at the level of the workload that owns a server
// (`job`, `server` and the group labels), so replacing a replica neither resolves nor re-fires
// a page. Only five alerts carry an `action`; for one server at one moment at most one action
// holds: each condition yields to the ones before it, present states before future ones and a
// higher severity before a lower one: unauthenticated; absent with refused calls; a credential
// expiring within a day (or expired); absent; tool absent; budget exhausted; a credential
// expiring within days (or failing to renew). `severity` is `warning` unless calls were
// actually refused (then a `critical` twin fires; alertmanager.example.yml lets it inhibit the
// warning).
local lib = import 'lib.libsonnet';

{
  prometheusAlerts+:: {
    local cfg = $._config,
    local v = lib.vars(cfg),
    local ws = cfg.groupLabels + ['job', 'server'],
    local w = cfg.groupLabels + ['job'],
    local r = cfg.groupLabels + ['job'] + cfg.replicaLabels,
    local fig(labels, expr, fmt='%.0f', otherwise='0') = lib.figure(cfg, labels, expr, fmt, otherwise),
    local list(expr, label, otherwise='none') = lib.list(cfg, ws, expr, label, otherwise),
    // The replicas a workload alert names: instance, and the pod where there is one.
    local replicaList(expr, otherwise='none') = lib.list(cfg, ws, expr, 'instance', otherwise, 'pod'),
    local where = lib.where(cfg),
    local forOf(name) = cfg['for'][name],
    local annotations(name, summary, description, server=true) = {
      summary: summary,
      description: description,
      runbook_url: lib.runbook(cfg, name),
    } + lib.dashboard(cfg, server),

    // The workload conditions.
    local U = '(server:mcp_readiness_server_state:unauthenticated_replicas > 0)',
    local A = '(server:mcp_readiness_server_state:absent_replicas > 0)',
    local R = '(%(refused_s)s > 0)' % v,
    // Seconds to the expiry of a credential that cannot renew itself, below `secs` (negative:
    // expired, and it keeps firing until the credential is replaced).
    local C(secs) = '((server:mcp_readiness_credential_expiry_timestamp_seconds:min - time()) < %d)' % secs,
    // A credential that renews itself, expired for a while though the exporter still holds it.
    local renewalFailing = '(min by (%(ws)s, renewable) (instance_server:mcp_readiness_credential_expiry_timestamp_seconds:last%(renewable_s)s) - time() < -%(renewal_overdue_secs)d)' % v,
    local T = '(sum by (%(ws)s) (%(tool_absent_s)s) > 0)' % v,
    local B = '(sum by (%(ws)s) (%(budget_r)s) > 0)' % v,
    local unless(cond, before) =
      cond + std.join('', ['\nunless on (%s)\n%s' % [v.ws, b] for b in before]) + '\n',
    local critical(cond) = '(\n' + cond + ')\nand on (%s)\n%s\n' % [v.ws, R],
    // The effective conditions, in order.
    local absentCritical = '(\n' + A + '\nand on (%s)\n%s\n)' % [v.ws, R],
    local credentialCritical = '(\n' + unless(C(v.crit_secs), [U, absentCritical]) + ')',
    local toolAbsent = '(\n' + unless(T, [U, A, credentialCritical]) + ')',

    // "on N of M replicas" for a workload alert whose value is N.
    local replicas = 'on {{ $value | printf "%.0f" }} of '
                     + fig(w, 'job:mcp_readiness_build_info:replicas{{M}}', otherwise='?')
                     + ' replicas',
    local refused = fig(ws, v.refused_s + '{{M}}')
                    + ' calls to it were refused as not ready in the last ' + cfg.refusedWindow,
    local who = '`{{ $labels.server }}` (job {{ $labels.job }}' + where + ')',
    // `{{ if }}` the alert's server is a `/probe` target (its state comes from probe answers):
    // the probe's own words then (no supervisor, no replicas, no reload).
    local ifProbe = '{{ if printf "%s" %s | query }}' % [
      std.strReplace('instance_server:mcp_readiness_server_state:last3m{{M}} and on (%s) instance:mcp_readiness_probe_success:last' % v.r, '{M}', lib.matcher(cfg, ws).format),
      lib.matcher(cfg, ws).args,
    ],
    // `{{ else if }}` the alert's workload is a pushed pre-flight (`check --push`: its group at the
    // Pushgateway carries the run timestamp): the run's own words then (the run, when it ran,
    // what it counted, the next run).
    local runMatch = lib.matcher(cfg, w),
    local run(expr, pipe, otherwise='?') =
      local n = std.length(std.findSubstr('{M}', expr));
      '{{ with printf "%s" %s | query }}{{ . | first | value | %s }}{{ else }}%s{{ end }}'
      % [std.strReplace(expr, '{M}', runMatch.format), std.join(' ', std.repeat([runMatch.args], n)), pipe, otherwise],
    local elseIfPushed = '{{ else if printf "instance:mcp_readiness_run_timestamp_seconds:last{%s}" %s | query }}' % [runMatch.format, runMatch.args],
    local probed = who + ' is probed by `serve` at ' + replicaList('max by (instance, pod) (instance_server:mcp_readiness_server_state:last3m{{M}} and on (%s) instance:mcp_readiness_probe_success:last)' % v.r),

    local unauthenticated(severity, expr) = {
      alert: 'MCPServerUnauthenticated',
      // Value: replicas that see the server unauthenticated.
      expr: expr,
      'for': forOf('MCPServerUnauthenticated'),
      labels: { severity: severity, action: 'reauthorize' },
      annotations: annotations(
        'MCPServerUnauthenticated',
        'MCP server `{{ $labels.server }}` needs re-authorization',
        ifProbe + probed + ' and refuses the probe\'s credentials (HTTP 401, or 403 with a challenge; 403 insufficient_scope: a step-up): the credential of the probe module (the `module` of its target) is missing, expired or revoked, or lacks a scope. '
        + 'Next step: renew the module\'s credential (`readiness.probe.modules.<module>.headers` or its OAuth store: `mcp-readiness oauth login`), or fix the target\'s module; the next probe uses it.{{ else }}'
        + who + ' is unauthenticated ' + replicas
        + ' (' + replicaList('instance_server:mcp_readiness_server_state:unauthenticated{{M}}', 'restarted since and still connecting: the verdict holds until one reads it ready') + '): '
        + 'its credentials are missing, expired or revoked (HTTP 401, or 403 with a challenge), or lack a scope the server asks for (HTTP 403 insufficient_scope: a step-up, named in the reason on its status page), and waiting will not heal it. '
        + refused + '. '
        + 'Next step: re-authorize `{{ $labels.server }}` (a new token in its headers or env, or a new OAuth grant; for a step-up, `mcp-readiness oauth login` again: it asks for the scope the server named), then make the exporter use it (SIGHUP to `serve` retries it; restart `serve` when the token is in its unit\'s EnvironmentFile, which a reload does not re-read), or restart the agent service.{{ end }}',
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
        ifProbe + probed + ' and the probe cannot reach it: '
        + fig(ws, 'sum(%s{{M}})' % v.failed_connects_r)
        + ' probes failed to connect or to complete the handshake in the last ' + cfg.evidenceWindow + ' (refused, unreachable, throttled, or no MCP server at that URL). '
        + 'Next step: check the server behind the URL (is it up and listening there, the proxy or firewall in front, the path); nothing changes on the `serve` side, the next probe sees it.'
        + elseIfPushed
        + who + ' was absent in the last run of the pre-flight pushed as job {{ $labels.job }}: the run at '
        + run('max(instance:mcp_readiness_run_timestamp_seconds:last{{M}})', 'humanizeTimestamp')
        + ' (' + run('time() - max(instance:mcp_readiness_run_timestamp_seconds:last{{M}})', 'humanizeDuration') + ' ago) could not use it: '
        + 'it is not in the pre-flight\'s configuration, failed to start or to answer its handshake (unreachable, or throttling), or exited. That run counted '
        + fig(ws, 'sum(%s{{M}})' % v.failed_connects_r)
        + ' failed connection attempts and refused '
        + fig(ws, v.refused_s + '{{M}}')
        + ' calls to it as not ready. '
        + 'Next step: add or repair the `{{ $labels.server }}` connection in the configuration the pre-flight runs with (command, URL, installation, and what it needs on the host it runs on); the next run, due '
        + run('max(instance:mcp_readiness_run_timestamp_seconds:last{{M}} + instance:mcp_readiness_run_timestamp_seconds:interval{{M}})', 'humanizeTimestamp')
        + ', checks it again, and the alert resolves when a run finds it ready.{{ else }}'
        + who + ' is absent ' + replicas
        + ' (' + replicaList('instance_server:mcp_readiness_server_state:absent{{M}}') + '): '
        + 'it is not configured there, fails to start or to answer its handshake (unreachable, or throttling every one), exits, or keeps crashing. '
        + fig(ws, 'sum(%s{{M}})' % v.failed_connects_r)
        + ' connection attempts failed in the last ' + cfg.evidenceWindow + ', '
        + fig(ws, v.refused_s + '{{M}}')
        + ' calls were refused in the last ' + cfg.refusedWindow + ', and the supervisor backed off '
        + fig(ws, 'sum(%s{{M}})' % v.crash_loop_r)
        + ' times in the last ' + cfg.crashLoopWindow + ' (a crash loop from ' + cfg.crashLoopRestarts + '). '
        + '{{ with printf "%s" %s | query }}Its credential renewal is failing too (expired {{ . | first | value | humanizeDuration | reReplaceAll "^-" "" }} ago, not renewed): the authorization server is unreachable or refuses the renewal, so MCPCredentialExpiringSoon tells identity; this connection needs no change if that is the cause. {{ end }}'
          % [std.strReplace('min(instance_server:mcp_readiness_credential_expiry_timestamp_seconds:last{renewable=\\"true\\", {M}} - time() < -%d)' % v.renewal_overdue_secs, '{M}', lib.matcher(cfg, ws).format), lib.matcher(cfg, ws).args]
        + 'Next step: add or repair the `{{ $labels.server }}` connection (command, URL, installation), then reload the exporter.{{ end }}',
      ),
    },

    local ago = '{{ $value | humanizeDuration | reReplaceAll "^-" "" }}',
    local credential(severity, expr) = {
      alert: 'MCPCredentialExpiringSoon',
      // Value: seconds until the first replica's credential for the server expires (negative:
      // it expired that long ago).
      expr: expr,
      'for': forOf('MCPCredentialExpiringSoon'),
      labels: { severity: severity, action: 'reauthorize' },
      annotations: annotations(
        'MCPCredentialExpiringSoon',
        '{{ if lt $value 0.0 }}The credential of MCP server `{{ $labels.server }}` expired ' + ago + ' ago'
        + '{{ else }}The credential of MCP server `{{ $labels.server }}` expires in {{ $value | humanizeDuration }}{{ end }}',
        who
        + '{{ if $labels.renewable }} renews its credential itself, but its expiry passed ' + ago + ' ago and it was not renewed: '
        + 'the renewal is failing (a revoked refresh token, an unreachable identity provider), and when the exporter next needs the credential the server reads unauthenticated. '
        + 'Next step: read the exporter log for the refresh error, then re-authorize `{{ $labels.server }}` (a new OAuth grant for its credential store) and reload the exporter.'
        + '{{ else }}{{ if lt $value 0.0 }} uses a credential that expired ' + ago + ' ago{{ else }} uses a credential that expires in {{ $value | humanizeDuration }}{{ end }} '
        + '(at {{ with printf "server:mcp_readiness_credential_expiry_timestamp_seconds:min{%s}" %s | query }}{{ . | first | value | humanizeTimestamp }}{{ end }}) '
          % [lib.matcher(cfg, ws).format, lib.matcher(cfg, ws).args]
        + 'and cannot renew itself: once expired, the server reads unauthenticated and its calls are refused. '
        + 'Next step: re-authorize `{{ $labels.server }}` now (a new token, or a new OAuth grant for its credential store), then reload the exporter.{{ end }}',
      ),
    },

    // A pushed pre-flight (`check --push`) that stopped running: the gateway keeps serving its
    // last push, so its states and evidence stay as the last run saw them; this says they are old.
    local preflightStopped = {
      alert: 'MCPReadinessPreflightStopped',
      // Value: seconds since the last pushed run.
      expr: |||
        (time() - instance:mcp_readiness_run_timestamp_seconds:last)
        > %(preflight_missed)d * instance:mcp_readiness_run_timestamp_seconds:interval
      ||| % v,
      'for': forOf('MCPReadinessPreflightStopped'),
      labels: { severity: 'warning' },
      annotations: annotations(
        'MCPReadinessPreflightStopped',
        'The mcp-readiness pre-flight pushed as job {{ $labels.job }} stopped running',
        'The pre-flight pushed to the Pushgateway as job {{ $labels.job }}' + where + ' last ran {{ $value | humanizeDuration }} ago; it runs every '
        + '{{ with printf "instance:mcp_readiness_run_timestamp_seconds:interval{%s}" %s | query }}{{ . | first | value | humanizeDuration }}{{ else }}?{{ end }}'
          % [lib.matcher(cfg, r).format, lib.matcher(cfg, r).args]
        + ', so it missed at least ' + (cfg.preflightMissedRuns - 1) + ' run. The gateway still serves its last push: the MCP alerts of this job show what that run saw, not what is true now. '
        + 'Next step: look at its timer or cron job (`systemctl status` and `journalctl -u` of the unit, or the cron log) and at the last run\'s output: a failed push prints `error: pushing to the Pushgateway`.',
        false,
      ),
    },

    // A scraped exporter that keeps restarting (a crash loop, an OOM kill at each start). Only
    // targets Prometheus scrapes (an `up` series of the same target): a pushed run is a new
    // process each time.
    // A `/probe` target (an MCP URL probed by `serve`, one scrape each) that fails: a share of
    // its probes in the window, not a state for a `for` (a flapping target resets any `for`),
    // counting a scrape without an answer (the probe ran past the scrape timeout, a hung server)
    // as failed. It yields to MCPServerUnauthenticated (the probe's credential: reauthorize), and
    // to a firing MCPServerAbsent (a target down for good: that page names the action).
    local probeFailing = {
      alert: 'MCPProbeFailing',
      // Value: the failed share of the target's probes within the window.
      expr: |||
        (
          max by (%(r)s) (
            (1 - avg_over_time(mcp_readiness_probe_success%(s)s[%(probe_window)s]))
            or
            label_replace(
              instance:mcp_readiness_probe_success:last * 0 + on (%(r)s) group_left () (1 - avg_over_time(up[%(probe_window)s])),
              "failed", "scrape", "", ""
            )
          ) >= %(probe_ratio)s
        )
        * on (%(r)s) group_left (server)
        group by (%(r)s, server) (instance_server:mcp_readiness_server_state:last3m)
        unless on (%(ws)s)
        (server:mcp_readiness_server_state:unauthenticated_replicas > 0)
        unless on (%(ws)s)
        ALERTS{alertname=~"MCPServerUnauthenticated|MCPServerAbsent", alertstate="firing"}
      ||| % v,
      'for': forOf('MCPProbeFailing'),
      labels: { severity: 'warning' },
      annotations: annotations(
        'MCPProbeFailing',
        'Probes of MCP server `{{ $labels.server }}` at {{ $labels.instance }} fail',
        'The probe of {{ $labels.instance }} (server `{{ $labels.server }}`, job {{ $labels.job }}' + where + ') failed {{ $value | humanizePercentage }} of the time in the last ' + cfg.probeWindow
        + ': the server at that URL did not read ready, or `/probe` got no answer before the scrape timeout (it hangs). It is down, hangs, throttles, or comes and goes. '
        + 'Next step: ask `serve` for one probe and read its state and reason: `curl -s "http://<serve>/probe?target={{ $labels.instance }}&server={{ $labels.server }}" | grep -E \'server_state|probe_\'` (add `&module=<name>` for a target that needs credentials), then look at the server behind the URL (its logs, its load, the proxy in front).',
        true,
      ),
    },

    // A workload that pushed its metrics over OTLP and stopped: no `up` goes to 0 and no
    // staleness marker ends its series, so its states simply stop; this says so.
    local agentStopped = {
      alert: 'MCPReadinessAgentStopped',
      // Value: seconds since the workload last reported.
      expr: '(time() - job:mcp_readiness_build_info:last_report) > %(silence_secs)d\n' % v,
      'for': forOf('MCPReadinessAgentStopped'),
      labels: { severity: 'warning' },
      annotations: annotations(
        'MCPReadinessAgentStopped',
        'The agent service of job {{ $labels.job }} stopped reporting',
        'The workload of job {{ $labels.job }}' + where + ' pushed mcp-readiness metrics (OTLP, no scrape target) and has not reported for {{ $value | humanizeDuration }}: '
        + 'the service stopped or crashed, or its metrics no longer reach Prometheus (the OTLP endpoint, the collector). While it is silent its MCP alerts keep the states it reported last (a page neither resolves because the agent died nor claims a fix), for up to ' + cfg.agentSilenceHoldHours + ' hours. '
        + 'Next step: check that the service runs (`kubectl get pods`, `systemctl status`), then its OTLP exporter errors in its log and the collector or Prometheus OTLP receiver it sends to (`OTEL_EXPORTER_OTLP_ENDPOINT`). '
        + 'A workload retired on purpose stops alerting ' + cfg.agentSilenceHoldHours + ' hours after its last report.',
        false,
      ),
    },

    local exporterRestarting = {
      alert: 'MCPReadinessExporterRestarting',
      // Value: restarts within the window.
      expr: |||
        changes(process_start_time_seconds%(s)s[%(restart_window)s]) >= %(restarts)s
        and on (%(r)s) instance:mcp_readiness_build_info:present
        and on (%(r)s) up
      ||| % v,
      'for': forOf('MCPReadinessExporterRestarting'),
      labels: { severity: 'warning' },
      annotations: annotations(
        'MCPReadinessExporterRestarting',
        'mcp-readiness exporter {{ $labels.instance }} keeps restarting',
        '{{ $labels.instance }} (job {{ $labels.job }}' + where + ') started {{ $value | printf "%.0f" }} times in the last ' + cfg.exporterRestartWindow
        + ': it exits and is started again (a crash, an out-of-memory kill, a failing start), so each restart loses its connections and the readiness it reports starts over. '
        + 'Next step: read why it exits: `journalctl -u mcp-readiness -n 100` (the last lines before each start), or `kubectl logs --previous` and `kubectl describe pod` (its last state: OOMKilled, an exit code) for the pod.',
        false,
      ),
    },

    // A ready server whose calls fail in transport or time out, or return errors (`isError`, a
    // failed task: its backend is down): none of the three actions applies (no `action`).
    // Warning: the worst replica's share over the thresholds (per replica, so one wedged child
    // is not diluted by the healthy replicas); critical: every call of the window failed.
    local callsFailing(severity, expr) = {
      alert: 'MCPToolCallsFailing',
      // Value: the failed share (warning: transport errors and timeouts, else error results, of
      // the worst replica; critical: 1, every call).
      expr: expr,
      'for': forOf('MCPToolCallsFailing'),
      labels: { severity: severity },
      annotations: annotations(
        'MCPToolCallsFailing',
        'Calls to MCP server `{{ $labels.server }}` fail although it is ready',
        who + ' is ready, but '
        + (if severity == 'critical' then 'every call to it in the last ' + cfg.callFailureWindow + ' failed: on the worst replica '
           else 'of its calls in the last ' + cfg.callFailureWindow + ', on the worst replica ')
        + fig(ws, v.transport_ratio_s + '{{M}} * 100')
        + '% failed in transport or timed out and '
        + fig(ws, v.error_ratio_s + '{{M}} * 100')
        + '% returned an error result (isError, or a task that failed); replicas where more than ' + std.toString(cfg.callFailureRatio * 100) + '% failed: '
        + replicaList('max by (instance, pod) ({__name__=~\\"%(transport_ratio_r)s|%(error_ratio_r)s\\", {M}} > %(failure_ratio)s)' % v, 'none (each a little)')
        + '. The server accepts connections and lists its tools but its calls fail: it is frozen, overloaded, or the backend it calls is down. '
        + 'Next step: look at the server itself on those replicas (its logs, load, the backend it calls); restart it if it is frozen.',
      ),
    },

    groups+: [
      {
        name: 'mcp-readiness.alerts',
        rules: [
          unauthenticated('critical', critical(U + '\n')),
          unauthenticated('warning', U + '\n'),
          absent('critical', critical(unless(A, [U]))),
          // An absent server's warning yields only to unauthenticated: a credential expiring
          // within a day is a future identity can fix, the absence a present failure.
          absent('warning', unless(A, [U])),
          credential('critical', credentialCritical + '\n'),
          // The warning twin of the critical one, or days ahead / a failing renewal when no
          // present failure of the server asks for another action.
          // A failing renewal is a cause of its own (an unreachable authorization server): it
          // yields only to unauthenticated, never to the absent it causes.
          credential('warning', unless('(\n' + C(v.warn_secs) + '\n)', [U, A, T, B]) + 'or\n' + unless(renewalFailing, [U]) + 'or\n' + credentialCritical + '\n'),
          {
            alert: 'MCPToolAbsent',
            // Value: calls in the tool window that named tools the ready server does not offer.
            expr: toolAbsent + '\n',
            'for': forOf('MCPToolAbsent'),
            labels: { severity: 'warning', action: 'add_connection' },
            annotations: annotations(
              'MCPToolAbsent',
              'Calls name tools that MCP server `{{ $labels.server }}` does not offer',
              who + ' is ready, but {{ $value | printf "%.0f" }} calls in the last ' + cfg.toolAbsentWindow
              + ' named tools it does not offer: '
              + list(v.tool_absent_s + '{{M}}', 'tool') + '. '
              + 'Next step: add the connection that offers these tools (or the server version that has them), or fix the tool names the agent calls.',
            ),
          },
          {
            alert: 'MCPResolveBudgetExhausted',
            // Value: resolutions that ran out of budget within the window.
            expr: unless(B, [U, A, credentialCritical, toolAbsent]),
            'for': forOf('MCPResolveBudgetExhausted'),
            labels: { severity: 'warning', action: 'extend_wait_budget' },
            annotations: annotations(
              'MCPResolveBudgetExhausted',
              'MCP server `{{ $labels.server }}` keeps outrunning its wait budget',
              who + ' takes longer to become ready than callers wait: {{ $value | printf "%.0f" }} resolutions ran out of budget in the last '
              + cfg.budgetExhaustedWindow + ' while it was connecting; '
              + fig(ws, 'server:mcp_readiness_connect_duration_seconds:p95{{M}}', 'connects take %.1f s at p95', 'no connect to it has succeeded yet (no connect time to size a budget from)')
              + ' and the budget in force is '
              + fig(ws, 'server:mcp_readiness_wait_budget_seconds:max{{M}}', '%g s', 'unknown') + '. '
              + 'Next step: raise `readiness.servers.{{ $labels.server }}.budget`'
              // No suggestion without a successful connect: the p95 it comes from is missing.
              + fig(ws, 'server:mcp_readiness_wait_budget_seconds:suggested{{M}}', ' to about %.0f s', ' above the time it takes to start')
              + ' (it overrides the global `readiness.budget` for this server only; in an agent service, the budget of its ServerSpec / HubOptions), or move its steps later in the run.',
            ),
          },
          {
            alert: 'MCPWaitBudgetBelowConnectTime',
            // Information only: no resolution ran out of budget yet, but a typical connect is
            // longer than the budget. Value: p95 connect time / budget.
            expr: unless(
              '(server:mcp_readiness_connect_duration_seconds:p95 / on (%(ws)s) server:mcp_readiness_wait_budget_seconds:max > 1)' % v,
              [U, A, T, B]
            ),
            'for': forOf('MCPWaitBudgetBelowConnectTime'),
            labels: { severity: 'info' },
            annotations: annotations(
              'MCPWaitBudgetBelowConnectTime',
              'MCP server `{{ $labels.server }}` connects slower than its wait budget',
              who + ' connects in '
              + fig(ws, 'server:mcp_readiness_connect_duration_seconds:p95{{M}}', '%.1f s', '?')
              + ' at p95, longer than its wait budget of '
              + fig(ws, 'server:mcp_readiness_wait_budget_seconds:max{{M}}', '%g s', '?')
              + '; no call has run out of budget yet. If calls start right after a (re)connect, consider `readiness.servers.{{ $labels.server }}.budget`'
              + fig(ws, 'server:mcp_readiness_wait_budget_seconds:suggested{{M}}', ' of about %.0f s', '')
              + ' (the global `readiness.budget` stays the default for the others).',
            ),
          },
          callsFailing('critical', unless('(%(failed_ratio_s)s >= 1)' % v, [U, A])),
          callsFailing('warning', unless('(\n(%(transport_ratio_s)s > %(failure_ratio)s)\nor\n(%(error_ratio_s)s >= %(tool_error_ratio)s)\n)' % v, [U, A])),
        ],
      },
      {
        name: 'mcp-readiness.exporter',
        rules: [
          {
            alert: 'MCPReadinessExporterDown',
            // A target that exported mcp_readiness_build_info (whatever its job is called) and
            // does not answer now, for as long as it lasts; and a target of the
            // `exporterSelector` jobs that was never scraped successfully.
            // A `/probe` target is not an exporter: MCPProbeFailing covers its failed scrapes.
            expr: '(\n(up == 0) and on (%(r)s) instance:mcp_readiness_build_info:present\n' % v
                  + (if cfg.exporterSelector == '' then '' else 'or\n(up{%(exporter)s} == 0)\n' % v)
                  + ')\nunless on (%(r)s) instance:mcp_readiness_probe_success:last\n' % v,
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
          exporterRestarting,
          agentStopped,
          probeFailing,
          {
            alert: 'MCPReadinessExporterAbsent',
            // No target exports mcp_readiness_build_info (nor is down after it did), and no
            // target of the `exporterSelector` jobs is discovered.
            expr: 'absent(instance:mcp_readiness_build_info:present)\n'
                  + (if cfg.exporterSelector == '' then '' else 'unless on ()\nup{%(exporter)s}\n' % v),
            'for': forOf('MCPReadinessExporterAbsent'),
            labels: { severity: 'warning' },
            annotations: {
              summary: 'No mcp-readiness exporter is discovered',
              description: 'No scrape target exports `mcp_readiness_build_info`'
                           + (if cfg.exporterSelector == '' then '' else ' and none matches `' + cfg.exporterSelector + '`')
                           + ': no readiness of any MCP server is known and no MCP alert can fire. '
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
            // An exporter that reports no MCP server at all, unless it is a `serve` that answers
            // /probe (a probe-only `serve`: mcp_readiness_probe_modules > 0).
            expr: |||
              max without (version) (last_over_time(mcp_readiness_build_info%(s)s[3m]))
              unless on (%(r)s)
              last_over_time(mcp_readiness_server_state%(s)s[3m])
              unless on (%(r)s)
              (last_over_time(mcp_readiness_probe_modules%(s)s[3m]) > 0)
            ||| % v,
            'for': forOf('MCPReadinessNoServers'),
            labels: { severity: 'warning' },
            annotations: annotations(
              'MCPReadinessNoServers',
              'mcp-readiness on {{ $labels.instance }} sees no MCP server',
              '{{ $labels.instance }} (job {{ $labels.job }}' + where + ') exports mcp-readiness metrics but no server state: its configuration has no server (and no `readiness.probe`), or its Metrics is not the event sink of its Hub. '
              + 'Next step: check `mcpServers` in its configuration (or `HubOptions::builder().event_sink(metrics)` in the service).',
              false,
            ),
          },
          preflightStopped,
        ],
      },
    ],
  },
}

// The pre-flight's forecast (`check --next-run-in`, `readiness.schedule.every`, pushed with
// `check --push`): a credential that cannot renew itself and expires before the next run pages
// `reauthorize` now, while there is still time; a pre-flight whose next run is overdue (the
// timer stopped, the job fails before it pushes) is a ticket. Kept apart from alerts.libsonnet:
// its own group, its own `_config` keys.
local lib = import 'lib.libsonnet';

{
  _config+:: {
    // How long past its announced time a pre-flight's next run may be before it is overdue.
    preflightOverdueMinutes: 15,
    'for'+: {
      MCPCredentialExpiresBeforeNextRun: '1m',
      MCPPreflightRunOverdue: '5m',
    },
  },

  prometheusAlerts+:: {
    local cfg = $._config,
    local v = lib.vars(cfg),
    local forOf(name) = cfg['for'][name],
    local where = lib.where(cfg),
    local annotations(name, summary, description, server=true) = {
      summary: summary,
      description: description,
      runbook_url: lib.runbook(cfg, name),
    } + lib.dashboard(cfg, server),

    groups+: [
      {
        name: 'mcp-readiness.forecast',
        rules: [
          {
            alert: 'MCPCredentialExpiresBeforeNextRun',
            // Value: seconds between the credential's expiry and the next run (how much it
            // falls short). Both series come from the same push (`check --push`), so they share
            // the workload labels.
            expr: |||
              (
                max by (%(w)s) (mcp_readiness_run_next_timestamp_seconds%(s)s)
                - on (%(w)s) group_right ()
                min by (%(ws)s) (mcp_readiness_credential_expiry_timestamp_seconds{renewable="false"%(c)s})
              ) > 0
            ||| % v,
            'for': forOf('MCPCredentialExpiresBeforeNextRun'),
            labels: { severity: 'critical', action: 'reauthorize' },
            annotations: annotations(
              'MCPCredentialExpiresBeforeNextRun',
              'The credential of MCP server `{{ $labels.server }}` expires before the next run of `{{ $labels.job }}`',
              'The pre-flight of `{{ $labels.job }}`' + where + ' found that MCP server `{{ $labels.server }}` uses a credential that cannot renew itself '
              + '(a static bearer token, a refresh token at the end of its life) and expires {{ $value | humanizeDuration }} before the next run is due: '
              + 'that run will read `{{ $labels.server }}` unauthenticated and its steps will not run. '
              + 'Next step: re-authorize `{{ $labels.server }}` now (a new token, or a new OAuth grant for its credential store), then run the pre-flight again to clear this.',
            ),
          },
          {
            alert: 'MCPPreflightRunOverdue',
            // Value: seconds since the next run was due. No action: nothing is known about the
            // servers, only that the pre-flight did not push again.
            expr: |||
              time() - max by (%(w)s) (mcp_readiness_run_next_timestamp_seconds%(s)s) > %(overdue)d
            ||| % (v { overdue: cfg.preflightOverdueMinutes * 60 }),
            'for': forOf('MCPPreflightRunOverdue'),
            labels: { severity: 'warning' },
            annotations: annotations(
              'MCPPreflightRunOverdue',
              'The pre-flight `{{ $labels.job }}` has not run since its next run was due',
              'The last pre-flight of `{{ $labels.job }}`' + where + ' announced its next run {{ $value | humanizeDuration }} ago, and none has pushed since: '
              + 'its timer may have stopped, or the job fails before it pushes, so nothing checks its MCP servers before the scheduled work. '
              + 'Next step: look at the scheduler (systemd timer, CronJob) and the last run of `mcp-readiness check` for `{{ $labels.job }}`.',
              false,
            ),
          },
        ],
      },
    ],
  },
}

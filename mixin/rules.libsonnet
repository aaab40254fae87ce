// Recording rules: the replica view (one exporter each), the evidence the alerts need, and the
// workload view (per job, server and group labels: what the alerts and the fleet table read).
// Naming follows level:metric:operations; every series keeps the group labels (Kubernetes
// cluster / namespace) and the replica ones keep every target label (instance, pod ...).
local lib = import 'lib.libsonnet';

{
  prometheusRules+:: {
    local v = lib.vars($._config),
    local young(m, w) = '(%(m)s unless %(m)s offset %(w)s) > 0' % { m: m, w: w },
    // How much a counter grew within `w`: a series born within `w` at its full value (its
    // first event is invisible to increase(): the series is born with it), others by increase().
    local recent(m, w) = '%(y)s\nor\n(increase(%(m)s[%(w)s]) > 0)' % { m: m, w: w, y: young(m, w) },
    groups+: [
      {
        name: 'mcp-readiness.replica',
        rules: [
          {
            // The state each exporter reported last, for up to 3 minutes after its last
            // scrape: a missed scrape (stale markers) neither hides the state nor invents one.
            // One-hot like the source.
            record: 'instance_server:mcp_readiness_server_state:last3m',
            expr: 'last_over_time(mcp_readiness_server_state%(s)s[3m])\n' % v,
          },
          {
            // The same as one number, worst first: 0 ready, 1 connecting, 2 absent, 3 unauthenticated.
            record: 'instance_server:mcp_readiness_server_state:rank',
            expr: |||
              instance_server:mcp_readiness_server_state:last3m{state="connecting"}
              + ignoring (state) 2 * instance_server:mcp_readiness_server_state:last3m{state="absent"}
              + ignoring (state) 3 * instance_server:mcp_readiness_server_state:last3m{state="unauthenticated"}
            |||,
          },
          {
            // Calls refused as not ready within the evidence window (any tool of the server).
            record: 'instance_server:mcp_readiness_tool_calls_total:refused_recently',
            expr: 'sum without (tool, outcome) (\n%s\n)\n'
                  % recent('mcp_readiness_tool_calls_total{outcome="not_ready"%(c)s}' % v, v.evidence),
          },
          {
            // Failed connection attempts within the evidence window.
            record: 'instance_server:mcp_readiness_connects_total:failed_recently',
            expr: 'sum without (result) (\n%s\n)\n'
                  % recent('mcp_readiness_connects_total{result!="ok"%(c)s}' % v, v.evidence),
          },
          {
            // A crash loop: reconnects after drops, or entries into `absent`, within the window
            // (a server that exits after each handshake reads `ready` most of the time).
            record: 'instance_server:mcp_readiness_server_state:crash_loop',
            expr: |||
              (increase(mcp_readiness_reconnects_total%(s)s[%(crash_window)s]) >= %(crash_restarts)s)
              or
              (sum without (state) (increase(mcp_readiness_server_state_changes_total{state="absent"%(c)s}[%(crash_window)s])) >= %(crash_restarts)s)
            ||| % v,
          },
          {
            // Calls to each tool its ready server does not offer, within the tool window.
            record: 'instance_server_tool:mcp_readiness_tool_absent_total:recently',
            expr: recent('mcp_readiness_tool_absent_total%(s)s' % v, v.tool_window) + '\n',
          },
          {
            // Resolutions that ran out of budget while the server was connecting.
            record: 'instance_server:mcp_readiness_budget_exhausted_total:recently',
            expr: recent('mcp_readiness_budget_exhausted_total%(s)s' % v, v.budget_window) + '\n',
          },
          {
            // 1 while the replica sees the server unauthenticated: unauthenticated at least once
            // within the blip window and not ready now (a restart's `connecting` keeps it).
            record: 'instance_server:mcp_readiness_server_state:unauthenticated',
            expr: |||
              max without (state) (
                (max_over_time(mcp_readiness_server_state{state="unauthenticated"%(c)s}[%(blip)s]) == 1)
                unless ignoring (state)
                (instance_server:mcp_readiness_server_state:last3m{state="ready"} == 1)
              )
            ||| % v,
          },
          {
            // Non-zero while the replica has evidence that the server is absent: absent within
            // the blip window, not ready or unauthenticated now, and failed connects or refused
            // calls within the evidence window (an idle server with neither raises nothing);
            // or a crash loop, whatever the state; or refused calls to a server the replica has
            // no state for (not configured there).
            record: 'instance_server:mcp_readiness_server_state:absent',
            expr: |||
              (
                max without (state) (
                  (max_over_time(mcp_readiness_server_state{state="absent"%(c)s}[%(blip)s]) == 1)
                  unless ignoring (state)
                  (instance_server:mcp_readiness_server_state:last3m{state=~"ready|unauthenticated"} == 1)
                )
                and
                (
                  (instance_server:mcp_readiness_connects_total:failed_recently > 0)
                  or
                  (instance_server:mcp_readiness_tool_calls_total:refused_recently > 0)
                )
              )
              or
              instance_server:mcp_readiness_server_state:crash_loop
              or
              (
                (instance_server:mcp_readiness_tool_calls_total:refused_recently > 0)
                unless
                max without (state) (instance_server:mcp_readiness_server_state:last3m)
              )
            ||| % v,
          },
        ],
      },
      {
        name: 'mcp-readiness.workload',
        rules: [
          {
            // A server's worst state across the replicas of its workload, as a number ...
            record: 'server:mcp_readiness_server_state:worst_rank',
            expr: 'max by (%(ws)s) (instance_server:mcp_readiness_server_state:rank)\n' % v,
          },
          {
            // ... and one-hot by `state`: 1 for the worst state.
            record: 'server:mcp_readiness_server_state:worst',
            expr: |||
              label_replace(server:mcp_readiness_server_state:worst_rank == bool 0, "state", "ready", "", "")
              or label_replace(server:mcp_readiness_server_state:worst_rank == bool 1, "state", "connecting", "", "")
              or label_replace(server:mcp_readiness_server_state:worst_rank == bool 2, "state", "absent", "", "")
              or label_replace(server:mcp_readiness_server_state:worst_rank == bool 3, "state", "unauthenticated", "", "")
            |||,
          },
          {
            // Servers of a workload in each state (by their worst state); 0 when none.
            record: 'state:mcp_readiness_server_state:servers',
            expr: 'sum by (%(w)s, state) (server:mcp_readiness_server_state:worst)\n' % v,
          },
          {
            // How many replicas see each server in each state.
            record: 'server_state:mcp_readiness_server_state:instances',
            expr: 'sum by (%(ws)s, state) (instance_server:mcp_readiness_server_state:last3m)\n' % v,
          },
          {
            // The replicas of a workload: every exporter of the job (M in "N of M replicas").
            record: 'job:mcp_readiness_build_info:replicas',
            expr: 'count by (%(w)s) (last_over_time(mcp_readiness_build_info%(s)s[3m]))\n' % v,
          },
          {
            // Replicas that see the server unauthenticated (N for MCPServerUnauthenticated).
            record: 'server:mcp_readiness_server_state:unauthenticated_replicas',
            expr: 'count by (%(ws)s) (instance_server:mcp_readiness_server_state:unauthenticated)\n' % v,
          },
          {
            // Replicas with evidence that the server is absent (N for MCPServerAbsent).
            record: 'server:mcp_readiness_server_state:absent_replicas',
            expr: 'count by (%(ws)s) (instance_server:mcp_readiness_server_state:absent)\n' % v,
          },
          {
            // Calls refused as not ready within the evidence window, all replicas.
            record: 'server:mcp_readiness_tool_calls_total:refused_recently',
            expr: 'sum by (%(ws)s) (instance_server:mcp_readiness_tool_calls_total:refused_recently)\n' % v,
          },
          {
            // Calls to tools a ready server does not offer, by tool, on the replicas where the
            // server is ready now.
            record: 'server_tool:mcp_readiness_tool_absent_total:recently',
            expr: |||
              sum by (%(ws)s, tool) (
                instance_server_tool:mcp_readiness_tool_absent_total:recently
                and ignoring (tool, state)
                (instance_server:mcp_readiness_server_state:last3m{state="ready"} == 1)
              )
            ||| % v,
          },
          {
            // Share of the calls to a ready server that failed in transport or timed out.
            record: 'server:mcp_readiness_tool_calls_total:failure_ratio',
            expr: |||
              (
                sum by (%(ws)s) (increase(mcp_readiness_tool_calls_total{outcome=~"transport_error|timeout"%(c)s}[%(failure_window)s]))
                /
                (sum by (%(ws)s) (increase(mcp_readiness_tool_calls_total{outcome=~"ok|tool_error|transport_error|timeout"%(c)s}[%(failure_window)s])) >= %(failure_min)s)
              )
              and on (%(ws)s)
              (sum by (%(ws)s) (instance_server:mcp_readiness_server_state:last3m{state="ready"}) > 0)
            ||| % v,
          },
          {
            // The credential that runs out first across the replicas, as seconds left.
            record: 'server:mcp_readiness_credential_expiry_timestamp_seconds:min',
            expr: 'min by (%(ws)s) (last_over_time(mcp_readiness_credential_expiry_timestamp_seconds%(cred_s)s[3m]))\n' % v,
          },
        ],
      },
      {
        name: 'mcp-readiness.budget-advisor',
        rules: [
          {
            // p95 of successful connects per replica and server: over the last hour when a
            // connect finished in it, otherwise over the exporter's lifetime (a server that
            // connected once has one observation, invisible to increase()).
            record: 'instance_server:mcp_readiness_connect_duration_seconds:p95',
            expr: |||
              (
                histogram_quantile(0.95, sum without (result) (increase(mcp_readiness_connect_duration_seconds_bucket{result="ok"%(c)s}[1h])))
                >= 0
              )
              or
              histogram_quantile(0.95, sum without (result) (mcp_readiness_connect_duration_seconds_bucket{result="ok"%(c)s}))
            ||| % v,
          },
          {
            // The wait budget in force beside it (gap-tolerant like the state).
            record: 'instance_server:mcp_readiness_wait_budget_seconds:last3m',
            expr: 'last_over_time(mcp_readiness_wait_budget_seconds%(s)s[3m])\n' % v,
          },
          {
            // p95 connect time / budget: above 1 the budget is shorter than a typical connect.
            record: 'instance_server:mcp_readiness_connect_duration_seconds:p95_over_budget',
            expr: |||
              instance_server:mcp_readiness_connect_duration_seconds:p95
              /
              instance_server:mcp_readiness_wait_budget_seconds:last3m
            |||,
          },
          {
            // A budget that covers the p95 connect with a quarter to spare, in whole seconds.
            record: 'instance_server:mcp_readiness_wait_budget_seconds:suggested',
            expr: 'ceil(1.25 * instance_server:mcp_readiness_connect_duration_seconds:p95)\n',
          },
          {
            // The same advisor per server across the replicas of its workload.
            record: 'server:mcp_readiness_connect_duration_seconds:p95',
            expr: |||
              (
                histogram_quantile(0.95, sum by (%(ws)s, le) (increase(mcp_readiness_connect_duration_seconds_bucket{result="ok"%(c)s}[1h])))
                >= 0
              )
              or
              histogram_quantile(0.95, sum by (%(ws)s, le) (mcp_readiness_connect_duration_seconds_bucket{result="ok"%(c)s}))
            ||| % v,
          },
          {
            record: 'server:mcp_readiness_wait_budget_seconds:max',
            expr: 'max by (%(ws)s) (instance_server:mcp_readiness_wait_budget_seconds:last3m)\n' % v,
          },
          {
            record: 'server:mcp_readiness_wait_budget_seconds:suggested',
            expr: 'ceil(1.25 * server:mcp_readiness_connect_duration_seconds:p95)\n',
          },
        ],
      },
    ],
  },
}

// Recording rules: the replica view (one exporter each), the evidence the alerts need, and the
// workload view (per job, server and group labels: what the alerts and the fleet table read).
// Names follow level:metric:operations (Prometheus' recording-rule practice): the labels kept,
// the metric (without `_total` after an increase; a qualifier such as `_not_ready` names the
// outcomes selected), then the operations newest first with their window (`increase25h`,
// `ratio_increase1h`, `held_increase25h`). Every series keeps the group labels (Kubernetes
// cluster / namespace) and the replica ones keep every target label (instance, pod ...). The
// names before issue 36 are recorded one more release by `mcp-readiness.deprecated-aliases`.
//
// Cost: no window of an hour or more reads raw samples. A group pinned at one minute records how
// much each counter those windows read grew in the last minute, where it grew (sparse series),
// and the windows sum those: the refused calls (25h), the calls by outcome that the five call
// rules share (1h), failed connects (1h), calls to absent tools and exhausted budgets (2h).
// docs/scale.md measures it.
//
// Replicas that come and go, and exporters that go down:
//   - a replica that is gone (its target left service discovery: no `up` series) stops counting
//     as soon as its series are gone (3 minutes), whatever its counters said;
//   - a replica whose exporter is down (its target is still discovered, `up` is 0) keeps its
//     last state and verdicts until it is back: the rules marked "held" read their own previous
//     value while `up` is 0, so a page neither resolves nor re-fires through an exporter outage
//     of any length. This needs an evaluation interval under the 5-minute lookback (1m here).
local lib = import 'lib.libsonnet';

{
  prometheusRules+:: {
    local v = lib.vars($._config),
    // A replica that is a pushed run (`check --push`): its group at the Pushgateway carries the
    // run timestamp. Each run is a new process that pushes its own counters, so what the last
    // run saw is its counter values themselves (flat between runs, equal from run to run).
    local pushed = 'instance:mcp_readiness_run_timestamp_seconds:last',
    // How much counter `m` grew since the evaluation a minute ago (the per-minute group),
    // summed without the labels `drop` ('' for none): the growth where the value before is not
    // above the value now, else (after a reset, or where the series is born) its whole value.
    // The value before is the last sample within the 5 minutes before a minute ago: what the
    // evaluation a minute ago saw, or where that found none (a failed scrape's staleness
    // marker), what the last one that did saw; nothing counts twice and nothing is lost. Read
    // once (each series and each lookup costs more here than the samples do: a chain of
    // instant lookups `or`ed together took twice as long as this range).
    local perMinute(m, drop) =
      |||
        sum without (%(drop)s) (
          (
            (%(m)s - (last_over_time(%(m)s[5m] offset 1m) <= %(m)s))
            or
            %(m)s
          ) > 0
        )
      ||| % { m: m, drop: drop },
    // Evidence that counter `m` grew within `w`, summed without the labels `drop`, read from its
    // per-minute series `pm` rather than every raw sample of `m`: on a scraped or OTLP replica,
    // what the per-minute rule recorded within `w` (or a series of `m` born within `w`, at its
    // full value: a series older than the per-minute rule); on a pushed run, what the last run
    // counted (for as long as the gateway serves it: MCPReadinessPreflightStopped tells when
    // that is old).
    local evidenceFrom(m, pm, w, drop) =
      local sumDrop(x) = 'sum without (%s) (%s)' % [drop, x];
      '(\n(\n%(young)s\nor\n(%(sum)s > 0)\n)\nunless on (%(r)s) %(p)s\n)\nor\n(%(raw)s and on (%(r)s) %(p)s)'
      % {
        young: sumDrop('(%s unless %s offset %s) > 0' % [m, m, w]),
        sum: sumDrop('sum_over_time(%s[%s])' % [pm, lib.minutes(w)]),
        raw: sumDrop('%s > 0' % m),
        r: v.r,
        p: pushed,
      },
    // Refused calls within the refused-calls window: the per-minute increases recorded by
    // `mcp-readiness.per-minute` summed over the window (a tool's series born within the
    // window at its full value), on a scraped or OTLP replica; on a pushed run, what the last
    // run counted.
    local refusedEvidence =
      local m = 'mcp_readiness_tool_calls_total{outcome="not_ready"%(c)s}' % v;
      |||
        sum without (tool) (
          (
            (
              sum without (outcome) ((%(m)s unless %(m)s offset %(w)s) > 0)
              or
              (sum_over_time(%(p1m)s[%(w1m)s]) > 0)
            )
            unless on (%(r)s) %(p)s
          )
          or
          (sum without (outcome) (%(m)s > 0) and on (%(r)s) %(p)s)
        )
      ||| % { m: m, w: v.refused_window, w1m: lib.minutes(v.refused_window), p1m: v.refused_1m, r: v.r, p: pushed },
    // The servers a replica reported within `w` and no longer reports while it reports its build
    // info now: removed from its configuration on purpose (a reload), not a missed scrape (which
    // takes the build info with it) nor an exporter that is down. Their held and blip-window
    // states end at once, so a removed server's pages resolve at the next evaluation.
    local removed(w) = |||
      (
        (
          group by (%(r)s, server) (last_over_time(mcp_readiness_server_state%(s)s[%(w)s]))
          unless on (%(r)s, server)
          mcp_readiness_server_state%(s)s
        )
        and on (%(r)s)
        mcp_readiness_build_info%(s)s
      )
    ||| % (v { w: w }),
    // `expr`, or while the replica's exporter is down, the rule's own last value.
    local held(record, expr) = '(\n%s)\nor\n(%s and on (%s) %s)\n' % [expr, record, v.r, v.down],
    local rule(record, expr) = { record: record, expr: expr },
    local heldRule(record, expr) = rule(record, held(record, expr)),

    groups+: [
      {
        // Pinned at one minute (whatever the global evaluation interval): how much each counter
        // that a window of an hour or more reads grew since the evaluation a minute ago,
        // recorded only where it grew (sparse: a quiet fleet records nothing). A counter reset
        // counts its new value, a series born within the minute its full value (a replica that
        // refused calls only before its first scrape still counts after it is gone).
        // Consecutive evaluations cover every minute once, so the long windows sum these
        // exactly, reading at most one sample per minute instead of every raw sample of every
        // counter. A failed scrape (its staleness markers) counts nothing twice (perMinute()
        // above); a gap longer than 5 minutes counts the counter's value once more.
        name: 'mcp-readiness.per-minute',
        interval: '1m',
        rules: [
          // Refused calls by tool: the refused-calls window (25h) sums them.
          rule(v.refused_1m, perMinute('mcp_readiness_tool_calls_total{outcome="not_ready"%(c)s}' % v, 'outcome')),
          // Calls by outcome (every tool of the server): the shared call aggregate (1h) sums them.
          rule(v.calls_1m, perMinute('mcp_readiness_tool_calls_total{outcome=~"not_ready|%(call_outcomes)s"%(c)s}' % v, 'tool')),
          // Connection attempts by result: failed connects (1h) and the stuck-connecting
          // judgement (30m) sum them.
          rule(v.connects_1m, perMinute('mcp_readiness_connects_total%(s)s' % v, '')),
          // Calls to tools the ready server does not offer, by tool (2h).
          rule(v.tool_absent_1m, perMinute('mcp_readiness_tool_absent_total%(s)s' % v, '')),
          // Resolutions that ran out of budget (2h).
          rule(v.budget_1m, perMinute('mcp_readiness_budget_exhausted_total%(s)s' % v, '')),
        ],
      },
      {
        // The windows of an hour or more that read only per-minute increases (the calls of the
        // last hour by outcome, the refused calls of 25h): a group of their own, beside the
        // replica view, because at steady state they read up to 60 and 1,500 samples per series
        // (2.4 M and 15 M at 1,000 servers x 10 replicas where every counter grows every minute:
        // docs/scale.md). They count gone replicas too and read nothing the replica view records
        // but which replicas are pushed runs, so the replica view may read them an evaluation
        // late (in the same minute, or with up to one interval's lag, as the workload group
        // reads the replica view) without disagreeing with itself.
        name: 'mcp-readiness.long-windows',
        rules: [
          {
            // The calls of the last `callFailureWindow` through each replica by outcome (every
            // tool of the server): the one scan of the call counters that the call rules of the
            // replica view and the fleet table's columns share.
            record: v.calls_1h,
            expr: 'sum_over_time(%s[%s])\n' % [v.calls_1m, lib.minutes(v.failure_window)],
          },
          {
            // Calls refused as not ready within the refused-calls window (any tool of the
            // server), on every replica whose samples are in the window, gone ones included: the
            // workload's severity reads it (a rollout after refused calls keeps the page).
            record: v.refused_window_r,
            expr: refusedEvidence,
          },
        ],
      },
      {
        // Each replica's state, its evidence and its verdicts, in one group: a verdict reads a
        // replica's presence and state and the evidence held on them, and within a group each
        // rule sees the ones before it from the same evaluation. Split across groups (which
        // Prometheus evaluates side by side, each rule's results written as it goes), a replica
        // leaving discovery could be gone from one input and not yet from another for an
        // evaluation, and read as absent (a live test saw it pending).
        name: 'mcp-readiness.replica',
        rules: [
          // Pushed runs (`check --push`, one group at the Pushgateway each). The run timestamp
          // before the last one, kept while the gateway serves the group: this rule reads the
          // `:last` recorded one evaluation ago (before it is recorded again below), so a new
          // push is seen at whatever evaluation interval (under the 5-minute lookback).
          rule(
            'instance:mcp_readiness_run_timestamp_seconds:previous',
            |||
              (
                (instance:mcp_readiness_run_timestamp_seconds:last < last_over_time(mcp_readiness_run_timestamp_seconds%(s)s[%(stale)s]))
                or
                instance:mcp_readiness_run_timestamp_seconds:previous
              )
              and
              last_over_time(mcp_readiness_run_timestamp_seconds%(s)s[%(stale)s])
            ||| % v,
          ),
          // When the last pushed run ran (Unix time); its series also mark a replica as a
          // pushed run for the evidence rules below.
          rule(
            'instance:mcp_readiness_run_timestamp_seconds:last',
            'last_over_time(mcp_readiness_run_timestamp_seconds%(s)s[%(stale)s])\n' % v,
          ),
          // The pre-flight's schedule, in seconds between runs: the next run it announced
          // (`check --next-run-in`), else the spacing of its last two pushes, else
          // `preflightPeriodSeconds` (one run seen, none announced).
          rule(
            'instance:mcp_readiness_run_timestamp_seconds:interval',
            |||
              (
                (last_over_time(mcp_readiness_run_next_timestamp_seconds%(s)s[%(stale)s]) - instance:mcp_readiness_run_timestamp_seconds:last) > 0
              )
              or
              ((instance:mcp_readiness_run_timestamp_seconds:last - instance:mcp_readiness_run_timestamp_seconds:previous) > 0)
              or
              (instance:mcp_readiness_run_timestamp_seconds:last * 0 + %(preflight_period)d)
            ||| % v,
          ),
          // A replica of a workload that pushes its metrics (OTLP agents: no target, so no
          // `up`; not a pushed pre-flight, which the gateway serves until its next run): when it
          // last reported (Unix time: the timestamp of its newest build info sample, stamped
          // while `stateStaleWindow` and the lookback both still see it). Kept after it stops
          // while it stopped within `stateStaleWindow` of the workload's newest report (it went
          // silent with the workload: down, its pages held) and for at most
          // `agentSilenceHoldHours`; a replica that stopped while the others went on reporting is
          // gone (a scale-in) once they have reported for `stateStaleWindow` more.
          rule(
            'instance:mcp_readiness_build_info:last_report',
            |||
              (
                max without (version) (
                  timestamp(mcp_readiness_build_info%(s)s)
                  and last_over_time(mcp_readiness_build_info%(s)s[%(stale)s])
                )
                or
                (
                  (instance:mcp_readiness_build_info:last_report > time() - %(silence_hold_secs)d)
                  >= on (%(w)s) group_left ()
                  (job:mcp_readiness_build_info:last_report - %(stale_secs)d)
                )
              )
              unless on (%(w)s) group by (%(w)s) (last_over_time(up[%(stale)s]))
              unless on (%(w)s) group by (%(w)s) (instance:mcp_readiness_run_timestamp_seconds:last)
            ||| % v,
          ),
          // Held: the exporters of the workload (one series each, 1), read for "M replicas",
          // by the exporter alerts (a target that exported it is an exporter whatever its job
          // is called), and to tell a replica that is gone from one that is down.
          heldRule(
            'instance:mcp_readiness_build_info:present',
            'max without (version) (last_over_time(mcp_readiness_build_info%(s)s[%(stale)s]))\n' % v,
          ),
          // Held: the last `/probe` answer of each probe target (its `mcp_readiness_probe_success`),
          // kept while its scrape fails: a target answered by `/probe` stays a probe target (for
          // MCPProbeFailing, and so MCPReadinessExporterDown never blames the MCP server's URL).
          heldRule(
            'instance:mcp_readiness_probe_success:last',
            'last_over_time(mcp_readiness_probe_success%(s)s[%(stale)s])\n' % v,
          ),
          // Held: the state each exporter reported last, for up to `stateStaleWindow` (3m) after
          // its last scrape (a missed scrape neither hides the state nor invents one), and for as
          // long as its exporter is down. One-hot like the source. Not for a server its exporter
          // stopped reporting while reporting its build info in the same scrape: that server was
          // removed from the configuration on purpose, and its pages resolve at once.
          heldRule(
            'instance_server:mcp_readiness_server_state:last3m',
            |||
              last_over_time(mcp_readiness_server_state%(s)s[%(stale)s])
              unless on (%(r)s, server)
              %(removed)s
            ||| % (v { removed: removed(v.stale) }),
          ),
          // Held: each credential expiry the replica exported last (every credential, renewable
          // or not), for as long as its exporter is down: an expiry page neither resolves nor
          // re-fires through an exporter outage, like the states.
          heldRule(
            'instance_server:mcp_readiness_credential_expiry_timestamp_seconds:last',
            'last_over_time(mcp_readiness_credential_expiry_timestamp_seconds%(s)s[%(stale)s])\n' % v,
          ),
          {
            // The same as one number, worst first: 0 ready, 1 connecting, 2 absent, 3 unauthenticated.
            record: 'instance_server:mcp_readiness_server_state:rank',
            expr: |||
              instance_server:mcp_readiness_server_state:last3m{state="connecting"}
              + ignoring (state) 2 * instance_server:mcp_readiness_server_state:last3m{state="absent"}
              + ignoring (state) 3 * instance_server:mcp_readiness_server_state:last3m{state="unauthenticated"}
            |||,
          },
          // Held: the same on replicas that still exist (a replica gone in a rollout or a
          // scale-in is no evidence of absence once its series are gone). Here, beside the
          // verdicts that read it and in the same group as the replicas' presence, so a replica
          // that leaves is gone from both in the same evaluation.
          heldRule(
            v.refused_held_r,
            '%s\nand on (%s) instance:mcp_readiness_build_info:present\n' % [v.refused_window_r, v.r],
          ),
          {
            // Failed connection attempts within the evidence window.
            record: v.failed_connects_r,
            expr: evidenceFrom('mcp_readiness_connects_total{result!="ok"%(c)s}' % v, '%(connects_1m)s{result!="ok"}' % v, v.evidence, 'result') + '\n',
          },
          {
            // A crash loop by the supervisor's own judgement: it backs off (enters `absent`)
            // after handshakes that keep ending soon, or the connection keeps being re-made
            // while calls fail in transport. Value: entries into `absent` (or reconnects).
            // Reconnects while every call succeeds (a proxy that drops idle connections) and
            // failed connects without handshakes (a planned restart) are not a crash loop.
            record: v.crash_loop_r,
            expr: |||
              (
                sum without (state) (increase(mcp_readiness_server_state_changes_total{state="absent"%(c)s}[%(crash_window)s])) >= %(crash_restarts)s
                and
                sum without (result) (increase(mcp_readiness_connects_total{result="ok"%(c)s}[%(crash_window)s])) >= %(crash_restarts)s
              )
              or
              (
                increase(mcp_readiness_reconnects_total%(s)s[%(crash_window)s]) >= %(crash_restarts)s
                and
                sum without (tool, outcome) (increase(mcp_readiness_tool_calls_total{outcome="transport_error"%(c)s}[%(crash_window)s])) > 0
              )
            ||| % v,
          },
          {
            // Calls to each tool its ready server does not offer, within the tool window.
            record: v.tool_absent_r,
            expr: evidenceFrom('mcp_readiness_tool_absent_total%(s)s' % v, v.tool_absent_1m, v.tool_window, '') + '\n',
          },
          {
            // Resolutions that ran out of budget while the server was connecting, within the
            // budget window (it spans runs: a step run hourly is one alert), on replicas that
            // still exist (a replica gone in a rollout or a scale-in stops counting).
            record: v.budget_r,
            expr: '(\n%s\n)\nand on (%s) instance:mcp_readiness_build_info:present\n'
                  % [evidenceFrom('mcp_readiness_budget_exhausted_total%(s)s' % v, v.budget_1m, v.budget_window, ''), v.r],
          },
          {
            // Share of the calls through this replica, to a server it reads ready now, that failed
            // in transport or timed out ... (calls: ok, tool_error, task_failed, input_required,
            // transport_error, timeout; `input_required` is a call the server answered as it is
            // built to, asking for input an unattended run cannot give: a call, not a failure of
            // the server; `cancelled` is the caller's and counts as neither, `not_ready` is
            // MCPServer* evidence). Per replica: a child wedged on one replica of ten is not
            // diluted by the nine others.
            record: v.transport_ratio_r,
            expr: |||
              (
                sum without (outcome) (%(calls_1h)s{outcome=~"transport_error|timeout"})
                /
                (sum without (outcome) (%(calls_1h)s{outcome=~"%(call_outcomes)s"}) >= %(failure_min)s)
              )
              and ignoring (state)
              (instance_server:mcp_readiness_server_state:last3m{state="ready"} == 1)
            ||| % v,
          },
          {
            // ... and that the server answered with an error: an `isError` result, or a task it
            // ran that failed or was cancelled (`task_failed`): the server answers, its work fails.
            record: v.error_ratio_r,
            expr: |||
              (
                sum without (outcome) (%(calls_1h)s{outcome=~"tool_error|task_failed"})
                /
                (sum without (outcome) (%(calls_1h)s{outcome=~"%(call_outcomes)s"}) >= %(failure_min)s)
              )
              and ignoring (state)
              (instance_server:mcp_readiness_server_state:last3m{state="ready"} == 1)
            ||| % v,
          },
          {
            // 1 while the replica sees the server unauthenticated: unauthenticated at least once
            // within the blip window (or last, while its exporter is down) and not ready now (a
            // restart's `connecting` keeps it).
            record: 'instance_server:mcp_readiness_server_state:unauthenticated',
            expr: |||
              max without (state) (
                (
                  (
                    (max_over_time(mcp_readiness_server_state{state="unauthenticated"%(c)s}[%(blip)s]) == 1)
                    unless on (%(r)s, server)
                    %(removed)s
                  )
                  or
                  (instance_server:mcp_readiness_server_state:last3m{state="unauthenticated"} == 1 and on (%(r)s) %(down)s)
                )
                unless ignoring (state)
                (instance_server:mcp_readiness_server_state:last3m{state="ready"} == 1)
              )
            ||| % (v { removed: removed(v.blip) }),
          },
          // Held: non-zero while the replica has evidence that the server is absent: absent
          // within the blip window, not ready or unauthenticated now, and failed connects or
          // refused calls (an idle server with neither raises nothing); or a crash loop,
          // whatever the state; or `connecting` for the whole stuck window while handshakes
          // fail and none succeeds (throttled or unreachable); or refused calls to a server
          // the replica has no state for (not configured there).
          heldRule(
            'instance_server:mcp_readiness_server_state:absent',
            |||
              (
                max without (state) (
                  (
                    (
                      (max_over_time(mcp_readiness_server_state{state="absent"%(c)s}[%(blip)s]) == 1)
                      unless on (%(r)s, server)
                      %(removed)s
                    )
                    or
                    (instance_server:mcp_readiness_server_state:last3m{state="absent"} == 1 and on (%(r)s) %(down)s)
                  )
                  unless ignoring (state)
                  (instance_server:mcp_readiness_server_state:last3m{state=~"ready|unauthenticated"} == 1)
                )
                and
                (
                  (%(failed_connects_r)s > 0)
                  or
                  (%(refused_held_r)s > 0)
                )
              )
              or
              %(crash_loop_r)s
              or
              (
                max without (state) (min_over_time(instance_server:mcp_readiness_server_state:last3m{state="connecting"}[%(stuck_window)s]) == 1)
                and
                (sum without (result) (sum_over_time(%(connects_1m)s{result!="ok"}[%(stuck_1m)s])) > 0)
                unless
                (sum without (result) (sum_over_time(%(connects_1m)s{result="ok"}[%(stuck_1m)s])) > 0)
              )
              or
              (
                (%(refused_held_r)s > 0)
                unless
                max without (state) (instance_server:mcp_readiness_server_state:last3m)
              )
            ||| % (v { removed: removed(v.blip) }),
          ),
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
            // A workload that pushes its metrics (OTLP agents): when it last reported, the
            // newest of its replicas' reports (above), held as they are, for
            // MCPReadinessAgentStopped (a scraped workload that goes away is service discovery's
            // decision, and MCPReadinessExporterDown covers one that stops answering).
            record: 'job:mcp_readiness_build_info:last_report',
            expr: 'max by (%(w)s) (instance:mcp_readiness_build_info:last_report)\n' % v,
          },
          {
            // Servers of a workload in each state (by their worst state); 0 when none.
            record: 'state:mcp_readiness_server_state:servers',
            expr: 'sum by (%(w)s, state) (server:mcp_readiness_server_state:worst)\n' % v,
          },
          {
            // The replicas of a workload: every exporter of the job, a down one included
            // (M in "N of M replicas").
            record: 'job:mcp_readiness_build_info:replicas',
            expr: 'count by (%(w)s) (instance:mcp_readiness_build_info:present)\n' % v,
          },
          {
            // Replicas that see the server unauthenticated (N for MCPServerUnauthenticated);
            // after they are all replaced or restarted, the last count while every replica
            // reads the server `connecting` (a restart without a fix, or an agent service
            // that connects lazily, forgets nothing) until one reads it ready or absent.
            record: 'server:mcp_readiness_server_state:unauthenticated_replicas',
            expr: |||
              count by (%(ws)s) (instance_server:mcp_readiness_server_state:unauthenticated)
              or
              (
                server:mcp_readiness_server_state:unauthenticated_replicas
                and on (%(ws)s)
                (sum by (%(ws)s) (instance_server:mcp_readiness_server_state:last3m{state="connecting"}) > 0)
                unless on (%(ws)s)
                (sum by (%(ws)s) (instance_server:mcp_readiness_server_state:last3m{state=~"ready|absent"}) > 0)
              )
            ||| % v,
          },
          {
            // Replicas with evidence that the server is absent (N for MCPServerAbsent).
            record: 'server:mcp_readiness_server_state:absent_replicas',
            expr: 'count by (%(ws)s) (instance_server:mcp_readiness_server_state:absent)\n' % v,
          },
          {
            // Calls refused as not ready within the refused-calls window, all replicas: the live
            // ones (held through exporter outages) and the gone ones (a rollout, a scale-in):
            // what gates `critical`, so replacing the replicas that saw the refusals keeps it.
            record: v.refused_s,
            expr: |||
              sum by (%(ws)s) (
                %(refused_held_r)s
                or
                %(refused_window_r)s
              )
            ||| % v,
          },
          {
            // For the fleet table: calls refused as not ready, and calls that failed (transport
            // error, timeout, isError, a failed task), in the last `callFailureWindow` (1h); only
            // where there are some.
            record: v.refused_fleet_s,
            expr: 'sum by (%(ws)s) (%(calls_1h)s{outcome="not_ready"}) > 0\n' % v,
          },
          {
            record: v.failed_fleet_s,
            expr: 'sum by (%(ws)s) (%(calls_1h)s{outcome=~"%(failed_outcomes)s"}) > 0\n' % v,
          },
          {
            // Calls to tools a ready server does not offer, by tool, on the replicas where the
            // server is ready now.
            record: v.tool_absent_s,
            expr: |||
              sum by (%(ws)s, tool) (
                %(tool_absent_r)s
                and ignoring (tool, state)
                (instance_server:mcp_readiness_server_state:last3m{state="ready"} == 1)
              )
            ||| % v,
          },
          {
            // The worst replica's share of calls that failed in transport or timed out ...
            record: v.transport_ratio_s,
            expr: 'max by (%(ws)s) (%(transport_ratio_r)s)\n' % v,
          },
          {
            // ... and that the server answered with an error (isError, a failed task).
            record: v.error_ratio_s,
            expr: 'max by (%(ws)s) (%(error_ratio_r)s)\n' % v,
          },
          {
            // The share of the calls to the server that failed within the window, across the
            // replicas that read it ready (at least the minimum of calls): 1 (every call failed)
            // is the critical MCPToolCallsFailing.
            record: v.failed_ratio_s,
            expr: |||
              sum by (%(ws)s) (
                %(calls_1h)s{outcome=~"%(failed_outcomes)s"}
                and ignoring (outcome, state)
                (instance_server:mcp_readiness_server_state:last3m{state="ready"} == 1)
              )
              /
              (
                sum by (%(ws)s) (
                  %(calls_1h)s{outcome=~"%(call_outcomes)s"}
                  and ignoring (outcome, state)
                  (instance_server:mcp_readiness_server_state:last3m{state="ready"} == 1)
                ) >= %(failure_min)s
              )
            ||| % v,
          },
          {
            // The credential that cannot renew itself and runs out first across the replicas
            // (Unix time), held through exporter outages.
            record: 'server:mcp_readiness_credential_expiry_timestamp_seconds:min',
            expr: 'min by (%(ws)s) (instance_server:mcp_readiness_credential_expiry_timestamp_seconds:last%(cred_s)s)\n' % v,
          },
        ],
      },
      {
        // The budget advisor, per server across the replicas of its workload, every
        // `advisorInterval` (3 minutes; under the 5-minute lookback, so its series never gap):
        // the connect buckets are scanned once, here (the server dashboard asks for one
        // replica's p95 itself, for the one server it shows).
        name: 'mcp-readiness.budget-advisor',
        interval: $._config.advisorInterval,
        rules: [
          {
            // p95 of successful connects: over the last hour when a connect finished in it,
            // otherwise over the exporters' lifetime (a server that connected once has one
            // observation, invisible to increase()). A server with no successful connect (its
            // histogram exists at 0: histogram_quantile gives NaN) has no series here, so no
            // suggestion below and no NaN in the alerts that quote them.
            record: 'server:mcp_readiness_connect_duration_seconds:p95',
            expr: |||
              (
                histogram_quantile(0.95, sum by (%(ws)s, le) (increase(mcp_readiness_connect_duration_seconds_bucket{result="ok"%(c)s}[1h])))
                >= 0
              )
              or
              (
                histogram_quantile(0.95, sum by (%(ws)s, le) (last_over_time(mcp_readiness_connect_duration_seconds_bucket{result="ok"%(c)s}[10m])))
                >= 0
              )
            ||| % v,
          },
          {
            // The largest wait budget in force beside it.
            record: 'server:mcp_readiness_wait_budget_seconds:max',
            expr: 'max by (%(ws)s) (last_over_time(mcp_readiness_wait_budget_seconds%(s)s[10m]))\n' % v,
          },
          {
            // A budget that covers the p95 connect with a quarter to spare, in whole seconds;
            // none for a server without a p95 (no successful connect yet).
            record: 'server:mcp_readiness_wait_budget_seconds:suggested',
            expr: 'ceil(1.25 * server:mcp_readiness_connect_duration_seconds:p95)\n',
          },
        ],
      },
    ] + (if !$._config.deprecatedAliases then [] else [
      {
        // The names before issue 36 (`_total` after an increase, verdicts for operations),
        // recorded from the new ones for one release so dashboards and alerts of your own keep
        // working while you move them (docs/metrics.md lists both); removed in the next release.
        name: 'mcp-readiness.deprecated-aliases',
        rules: [
          rule(pair[0], pair[1] + '\n')
          for pair in [
            ['instance_server:mcp_readiness_tool_calls_total:refused_window', v.refused_window_r],
            ['instance_server:mcp_readiness_tool_calls_total:refused_recently', v.refused_held_r],
            ['instance_server:mcp_readiness_connects_total:failed_recently', v.failed_connects_r],
            ['instance_server:mcp_readiness_server_state_changes_total:crash_loop', v.crash_loop_r],
            ['instance_server_tool:mcp_readiness_tool_absent_total:recently', v.tool_absent_r],
            ['instance_server:mcp_readiness_budget_exhausted_total:recently', v.budget_r],
            ['instance_server:mcp_readiness_tool_calls_total:failure_ratio', v.transport_ratio_r],
            ['instance_server:mcp_readiness_tool_calls_total:tool_error_ratio', v.error_ratio_r],
            ['server:mcp_readiness_tool_calls_total:refused_recently', v.refused_s],
            ['server:mcp_readiness_tool_calls_total:refused_1h', v.refused_fleet_s],
            ['server:mcp_readiness_tool_calls_total:failed_1h', v.failed_fleet_s],
            ['server_tool:mcp_readiness_tool_absent_total:recently', v.tool_absent_s],
            ['server:mcp_readiness_tool_calls_total:failure_ratio', v.transport_ratio_s],
            ['server:mcp_readiness_tool_calls_total:tool_error_ratio', v.error_ratio_s],
          ]
        ] + [
          // Before: 1 when every call failed, else 0; now the share itself.
          rule('server:mcp_readiness_tool_calls_total:all_failed', '%s >= bool 1\n' % v.failed_ratio_s),
        ],
      },
    ]),
  },
}

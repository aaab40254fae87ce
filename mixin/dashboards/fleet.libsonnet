// MCP readiness / Fleet: who must act now (the table first), then states, waiting and calls.
local g = import 'lib.libsonnet';
local lib = import '../lib.libsonnet';

function(cfg)
  local v = lib.vars(cfg);
  local ws = std.join(', ', cfg.groupLabels + ['job', 'server']);
  local sel = 'job=~"$job", server=~"$server"';
  local isel = 'job=~"$job", instance=~"$instance", server=~"$server"';
  local actionAlerts = 'ALERTS{action!="", alertstate="firing", %s}' % sel;
  local override(name, props) = { matcher: { id: 'byName', options: name }, properties: props };
  // The row's own workload: its group labels (cluster, namespace), job and server. A set-up
  // without a group label has no such field: the variable gets an empty value, and `=~""`
  // matches the series without the label.
  local serverLink = '/d/%s?%svar-job=${__data.fields.job}&var-server=${__value.raw}&${__url_time_range}' % [
    cfg.dashboardUIDs.server,
    std.join('', ['var-%s=${__data.fields.%s}&' % [l, l] for l in cfg.groupLabels]),
  ];

  local firingWith(extra) = 'ALERTS{alertname=~"MCP.*", alertstate="firing", server!="", %s%s}' % [sel, extra];
  local firing = firingWith('');
  // The servers that need a human: a firing alert, or a worst state other than ready.
  local needs = '(max by (%s) (server:mcp_readiness_server_state:worst_rank{%s}) > 0 or max by (%s) (%s))' % [ws, sel, ws, firing];
  local only(expr) = '(%s) and on (%s) %s' % [expr, ws, needs];
  // 3 critical, 2 warning, 1 info, 0 no firing alert.
  local severity = 'max by (%s) (3 * %s or 2 * %s or %s)' % [ws, firingWith(', severity="critical"'), firingWith(', severity="warning"'), firingWith(', severity="info"')];
  local table = g.panel(
    2, 'table', 'Servers that need a human',
    'Only the servers of the selected jobs with a firing alert or a worst state other than ready, firing first, then by severity, then by state: the worst state across replicas, the alert (its action when it has one), its severity, since when (the alert\'s start, else the last state change), replicas that do not see it ready, and the calls refused as not ready or failed (transport error, timeout, isError, a failed task) in the last ' + cfg.callFailureWindow + '. Click a server for its dashboard, an alert for its runbook.',
    [10, 24, 0, 1],
    [
      g.target(only('max by (%s) (server:mcp_readiness_server_state:worst_rank{%s})' % [ws, sel]), instant=true, format='table'),
      g.target(only('max by (%s, alertname, action) (%s)' % [ws, firing]), instant=true, format='table'),
      g.target(only('(min by (%s) (ALERTS_FOR_STATE{alertname=~"MCP.*", %s}) or max by (%s) (mcp_readiness_server_state_changed_timestamp_seconds{%s})) * 1000' % [ws, sel, ws, isel]), instant=true, format='table'),
      g.target(only('sum by (%s) (1 - instance_server:mcp_readiness_server_state:last3m{state="ready", %s})' % [ws, isel]), instant=true, format='table'),
      g.target(only('count by (%s) (instance_server:mcp_readiness_server_state:last3m{state="ready", %s})' % [ws, isel]), instant=true, format='table'),
      g.target(only('sum by (%s) (%s{%s}) or 0 * max by (%s) (server:mcp_readiness_server_state:worst_rank{%s})' % [ws, v.refused_fleet_s, sel, ws, sel]), instant=true, format='table'),
      g.target(only('sum by (%s) (%s{%s}) or 0 * max by (%s) (server:mcp_readiness_server_state:worst_rank{%s})' % [ws, v.failed_fleet_s, sel, ws, sel]), instant=true, format='table'),
      g.target(only('%s or 0 * max by (%s) (server:mcp_readiness_server_state:worst_rank{%s})' % [severity, ws, sel]), instant=true, format='table'),
      // The sort key: firing and severity first, then the state.
      g.target(only('10 * (%s or 0 * max by (%s) (server:mcp_readiness_server_state:worst_rank{%s})) + on (%s) group_left max by (%s) (server:mcp_readiness_server_state:worst_rank{%s})' % [severity, ws, sel, ws, ws, sel]), instant=true, format='table'),
    ],
    'short',
    { custom: { align: 'auto', cellOptions: { type: 'auto' } } },
    { showHeader: true, cellHeight: 'sm', footer: { show: false } },
    {
      transformations: [
        { id: 'merge', options: {} },
        { id: 'sortBy', options: { sort: [{ field: 'Value #I', desc: true }] } },
        {
          id: 'organize',
          options: {
            excludeByName: { Time: true, 'Value #B': true, 'Value #I': true },
            renameByName: {
              'Value #A': 'state',
              alertname: 'alert',
              'Value #H': 'severity',
              'Value #C': 'since',
              'Value #D': 'replicas not ready',
              'Value #E': 'replicas',
              'Value #F': 'refused calls (1h)',
              'Value #G': 'failed calls (1h)',
            },
            indexByName: { server: 0, 'Value #A': 1, alertname: 2, action: 3, 'Value #H': 4, 'Value #C': 5, 'Value #D': 6, 'Value #E': 7, 'Value #F': 8, 'Value #G': 9, job: 10 },
          },
        },
      ],
    }
  ) + {
    fieldConfig+: {
      overrides: [
        override('state', [
          { id: 'mappings', value: g.rankMappings },
          { id: 'thresholds', value: g.rankThresholds },
          { id: 'color', value: { mode: 'thresholds' } },
          { id: 'custom.cellOptions', value: { type: 'color-background' } },
        ]),
        override('server', [{ id: 'links', value: [{ title: 'Server dashboard', url: serverLink }] }]),
        override('alert', [{ id: 'links', value: [{ title: 'Runbook', url: cfg.runbookURLPattern % '${__value.raw}', targetBlank: true }] }]),
        override('since', [{ id: 'unit', value: 'dateTimeFromNow' }]),
        override('replicas not ready', [
          { id: 'thresholds', value: g.zeroGood },
          { id: 'color', value: { mode: 'thresholds' } },
          { id: 'custom.cellOptions', value: { type: 'color-text' } },
        ]),
        override('severity', [
          { id: 'mappings', value: [{ type: 'value', options: {
            '0': { text: '', index: 0 },
            '1': { text: 'info', color: 'blue', index: 1 },
            '2': { text: 'warning', color: 'orange', index: 2 },
            '3': { text: 'critical', color: 'red', index: 3 },
          } }] },
          { id: 'color', value: { mode: 'fixed', fixedColor: 'text' } },
        ]),
      ] + [
        override(column, [
          { id: 'thresholds', value: g.zeroGood },
          { id: 'color', value: { mode: 'thresholds' } },
          { id: 'custom.cellOptions', value: { type: 'color-text' } },
        ])
        for column in ['refused calls (1h)', 'failed calls (1h)']
      ],
    },
  };

  local stateStat = g.stat(
    3, 'Servers by state',
    'How many servers are in each state now, each counted once in its worst state across the selected jobs\' replicas (recording rule state:mcp_readiness_server_state:servers; 0 when none). Ready is fine; connecting heals by itself; absent and unauthenticated need a human.',
    [6, 8, 0, 11],
    [g.target('sum by (state) (state:mcp_readiness_server_state:servers{job=~"$job"})', '{{state}}')],
    'short', g.zeroGood,
    [g.colorByName('ready', 'green')] + [
      {
        matcher: { id: 'byName', options: s },
        properties: [{ id: 'thresholds', value: { mode: 'absolute', steps: [{ color: 'green', value: null }, { color: g.stateColors[s], value: 1 }] } }],
      }
      for s in ['connecting', 'absent', 'unauthenticated']
    ],
  );

  local actionStat = g.stat(
    4, 'Servers needing each action',
    'Servers with a firing alert for each on-call action now (0 when none): reauthorize (identity), add_connection (platform), extend_wait_budget (agent tuning).',
    [6, 8, 8, 11],
    [g.target(
      'count by (action) (max by (%s, action) (%s))' % [ws, actionAlerts]
      + std.join('', [' or label_replace(vector(0), "action", "%s", "", "")' % a for a in ['reauthorize', 'add_connection', 'extend_wait_budget']]),
      '{{action}}'
    )],
    'short', g.zeroGood,
  );

  local exporterStat = g.stat(
    5, 'Exporters down',
    'Exporters that do not answer now, counted as MCPReadinessExporterDown counts them: targets that exported mcp_readiness_build_info (any job) or of the exporter jobs (%s) with up 0, never a /probe target (its failed probes are MCPProbeFailing); and those that answer. A down exporter raises MCPReadinessExporterDown for as long as it lasts.' % cfg.exporterSelector,
    [6, 8, 16, 11],
    [
      g.target(|||
        count(
          (
            ((up{job=~"$job", instance=~"$instance"} == 0) and on (cluster, namespace, job, instance, pod) instance:mcp_readiness_build_info:present{job=~"$job", instance=~"$instance"})
            or (up{%s, job=~"$job", instance=~"$instance"} == 0)
          )
          unless on (cluster, namespace, job, instance, pod) instance:mcp_readiness_probe_success:last{job=~"$job", instance=~"$instance"}
        ) or vector(0)
      ||| % cfg.exporterSelector, 'down'),
      g.target('count((up{job=~"$job", instance=~"$instance"} == 1) and on (cluster, namespace, job, instance, pod) instance:mcp_readiness_build_info:present{job=~"$job", instance=~"$instance"}) or vector(0)', 'up'),
    ],
    'short', g.zeroGood,
    [g.colorByName('up', 'green')],
  );

  local timeline = g.panel(
    6, 'state-timeline', 'State per server',
    "Each server's state over time, the worst across the selected replicas (recording rule instance_server:mcp_readiness_server_state:rank, which tolerates a missed scrape).",
    [8, 24, 0, 17],
    [g.target('max by (server) (instance_server:mcp_readiness_server_state:rank{%s})' % isel, '{{server}}')],
    'none',
    { mappings: g.rankMappings, color: { mode: 'thresholds' }, thresholds: g.rankThresholds },
    { showValue: 'never', mergeValues: true, rowHeight: 0.9, legend: { showLegend: false } },
  );

  g.dashboard(
    cfg, cfg.dashboardUIDs.fleet, 'MCP readiness / Fleet',
    'Which MCP servers need a human now, for which action, since when and on how many replicas; then states over time, waiting wasted and avoided, the budget advisor, tool calls and connections.',
    [
      g.row(1, 'Now: who must act', 0),
      table,
      stateStat,
      actionStat,
      exporterStat,
      timeline,
      g.row(7, 'Waiting', 25),
      g.timeseries(8, 'Wait wasted vs wait avoided',
                   'Wasted: seconds per second spent waiting in resolutions whose verdict was not ready. Avoided: the wait not spent because the state was known not to heal (what a resolver without states would have waited; concurrent calls to one server share one wait, so at most 1 s/s per server).',
                   [8, 12, 0, 26],
                   [
                     g.target('sum(rate(mcp_readiness_waste_seconds_total{%s}[$__rate_interval]))' % isel, 'wasted'),
                     g.target('sum(rate(mcp_readiness_avoided_wait_seconds_total{%s}[$__rate_interval]))' % isel, 'avoided'),
                   ], 's'),
      g.timeseries(9, 'Budget exhaustions',
                   'Resolutions whose wait budget ran out while the server was still connecting, per server and interval. They raise MCPResolveBudgetExhausted (action extend_wait_budget).',
                   [8, 12, 12, 26],
                   [g.target('sum by (server) (increase(mcp_readiness_budget_exhausted_total{%s}[$__rate_interval]))' % isel, '{{server}}')], 'short'),
      g.timeseries(10, 'Resolve wait p95 per server',
                   'p95 and p50 of how long resolutions waited, per server and verdict. Only connecting is waited on; unauthenticated and absent return at once.',
                   [8, 12, 0, 34],
                   [
                     g.target('histogram_quantile(0.95, sum by (server, state, le) (rate(mcp_readiness_resolve_wait_seconds_bucket{%s}[$__rate_interval])))' % isel, '{{server}} {{state}} p95'),
                     g.target('histogram_quantile(0.5, sum by (server, state, le) (rate(mcp_readiness_resolve_wait_seconds_bucket{%s}[$__rate_interval])))' % isel, '{{server}} {{state}} p50'),
                   ], 's'),
      g.timeseries(11, 'Budget advisor: p95 connect time vs wait budget',
                   'p95 of successful connect durations per server (last hour, or the lifetime when no connect finished in it) beside the wait budget in force. A p95 above the budget raises MCPWaitBudgetBelowConnectTime (information) until calls run out of budget.',
                   [8, 12, 12, 34],
                   [
                     g.target('max by (server) (server:mcp_readiness_connect_duration_seconds:p95{%s})' % sel, '{{server}} p95 connect'),
                     g.target('max by (server) (mcp_readiness_wait_budget_seconds{%s})' % isel, '{{server}} budget'),
                   ], 's'),
      g.row(12, 'Calls and connections', 42),
      g.timeseries(13, 'Tool-call outcomes',
                   'Calls through the ReadinessLayer per second, by outcome (ok, tool_error, not_ready, transport_error, timeout, cancelled). `serve` makes no calls: this panel is for agent services.',
                   [8, 12, 0, 43],
                   [g.target('sum by (outcome) (rate(mcp_readiness_tool_calls_total{%s}[$__rate_interval]))' % isel, '{{outcome}}')], 'reqps'),
      g.timeseries(14, 'Connects, reconnects, cooldown rejections',
                   'Connection attempts per second by result, reconnections after a dropped connection (a crash loop shows here), and calls failed fast while a server cools down.',
                   [8, 12, 12, 43],
                   [
                     g.target('sum by (result) (rate(mcp_readiness_connects_total{%s}[$__rate_interval]))' % isel, 'connect {{result}}'),
                     g.target('sum(rate(mcp_readiness_reconnects_total{%s}[$__rate_interval]))' % isel, 'reconnects'),
                     g.target('sum(rate(mcp_readiness_cooldown_rejections_total{%s}[$__rate_interval]))' % isel, 'cooldown rejections'),
                   ], 'ops'),
      g.timeseries(15, 'Calls to tools a ready server does not offer',
                   'Calls per second naming a tool that its ready server does not offer, by server and tool. They raise MCPToolAbsent (action add_connection).',
                   [8, 12, 0, 51],
                   [g.target('sum by (server, tool) (rate(mcp_readiness_tool_absent_total{%s}[$__rate_interval]))' % isel, '{{server}} {{tool}}')], 'reqps'),
      g.timeseries(16, 'Servers by state over time',
                   'How many servers of the selected jobs are in each state over time (recording rule state:mcp_readiness_server_state:servers; each server counted once, in its worst state across replicas).',
                   [8, 12, 12, 51],
                   [g.target('sum by (state) (state:mcp_readiness_server_state:servers{job=~"$job"})', '{{state}}')], 'short')
      + { fieldConfig+: { overrides: [g.colorByName(s, g.stateColors[s]) for s in std.objectFields(g.stateColors)] } },
    ],
    [{
      title: 'Server drill-down',
      type: 'link',
      url: '/d/%s?${__url_time_range}%s&${job:queryparam}&${instance:queryparam}&${server:queryparam}' % [cfg.dashboardUIDs.server, std.join('', ['&${%s:queryparam}' % l for l in cfg.groupLabels])],
      icon: 'dashboard',
      tooltip: '',
      targetBlank: false,
      asDropdown: false,
      includeVars: false,
      keepTime: false,
      tags: [],
    }],
  )

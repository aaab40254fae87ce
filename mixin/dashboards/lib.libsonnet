// Panel constructors for the mcp-readiness dashboards (Grafana schema 39). Every panel gets the
// `datasource` variable, a description and a unit; "now" panels use instant queries, so a
// resolved alert or a healthy fleet reads 0, never "No data" or a stale red.
local ds = { type: 'prometheus', uid: '${datasource}' };
{
  ds: ds,

  // State colours, used everywhere a state appears.
  stateColors: { ready: 'green', connecting: 'yellow', absent: 'orange', unauthenticated: 'red' },
  rankMappings: [{
    type: 'value',
    options: {
      '0': { text: 'ready', color: 'green', index: 0 },
      '1': { text: 'connecting', color: 'yellow', index: 1 },
      '2': { text: 'absent', color: 'orange', index: 2 },
      '3': { text: 'unauthenticated', color: 'red', index: 3 },
    },
  }],
  rankThresholds: {
    mode: 'absolute',
    steps: [
      { color: 'green', value: null },
      { color: 'yellow', value: 1 },
      { color: 'orange', value: 2 },
      { color: 'red', value: 3 },
    ],
  },
  // Green at 0, red from 1: counts of things that need a human.
  zeroGood: { mode: 'absolute', steps: [{ color: 'green', value: null }, { color: 'red', value: 1 }] },

  target(expr, legend='', refId='A', instant=false, format='time_series'):: {
    refId: refId,
    datasource: ds,
    expr: expr,
    legendFormat: legend,
    range: !instant,
    instant: instant,
    [if format != 'time_series' then 'format']: format,
  },

  panel(id, type, title, description, grid, targets, unit, fieldConfig={}, options={}, extra={}):: {
    id: id,
    type: type,
    title: title,
    description: description,
    datasource: ds,
    gridPos: { h: grid[0], w: grid[1], x: grid[2], y: grid[3] },
    targets: [
      targets[i] { refId: std.char(65 + i) }
      for i in std.range(0, std.length(targets) - 1)
    ],
    fieldConfig: { defaults: { unit: unit } + fieldConfig, overrides: [] },
    options: options,
  } + extra,

  row(id, title, y):: {
    id: id,
    type: 'row',
    title: title,
    collapsed: false,
    gridPos: { h: 1, w: 24, x: 0, y: y },
    panels: [],
  },

  timeseries(id, title, description, grid, targets, unit)::
    self.panel(id, 'timeseries', title, description, grid, targets, unit,
               { custom: { drawStyle: 'line', lineWidth: 1, fillOpacity: 10, showPoints: 'never', spanNulls: false } },
               { legend: { showLegend: true, displayMode: 'table', placement: 'bottom', calcs: ['lastNotNull', 'max'] }, tooltip: { mode: 'multi', sort: 'desc' } }),

  // A stat of instant queries: the value now, not the last value some time ago.
  stat(id, title, description, grid, targets, unit, thresholds, overrides=[])::
    self.panel(id, 'stat', title, description, grid, [t { instant: true, range: false } for t in targets], unit,
               { color: { mode: 'thresholds' }, thresholds: thresholds },
               { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'background', graphMode: 'none', textMode: 'value_and_name', orientation: 'horizontal', justifyMode: 'auto' })
    + { fieldConfig+: { overrides: overrides } },

  // Fixed colour for one series by its display name (Grafana's byName matcher).
  colorByName(name, color):: {
    matcher: { id: 'byName', options: name },
    properties: [{ id: 'color', value: { mode: 'fixed', fixedColor: color } }],
  },

  // The group labels' matchers (`cluster=~"$cluster", namespace=~"$namespace"` with the default
  // groupLabels), the variables that set them, and every selector's `job=~"$job"` scoped by them.
  groupSel(cfg):: std.join(', ', ['%s=~"$%s"' % [l, l] for l in cfg.groupLabels]),
  scoped(cfg, expr)::
    if std.length(cfg.groupLabels) == 0 then expr
    else std.strReplace(expr, 'job=~"$job"', $.groupSel(cfg) + ', job=~"$job"'),
  scopePanels(cfg, panels):: [
    p
    + (if std.objectHas(p, 'targets') then { targets: [t { expr: $.scoped(cfg, t.expr) } for t in p.targets] } else {})
    + (if std.objectHas(p, 'panels') then { panels: $.scopePanels(cfg, p.panels) } else {})
    for p in panels
  ],
  // One variable per group label, each scoped by the ones before it. Its All is `.*`: a set-up
  // without the label (no Kubernetes) has it empty and still matches.
  groupVariables(cfg):: [
    $.variable(
      cfg.groupLabels[i],
      cfg.groupLabels[i],
      'The `%s` label of the exporters (a group label of the alerts; empty where the set-up has none)' % cfg.groupLabels[i],
      if i == 0 then 'label_values(mcp_readiness_build_info, %s)' % cfg.groupLabels[i]
      else 'label_values(mcp_readiness_build_info{%s}, %s)' % [
        std.join(', ', ['%s=~"$%s"' % [l, l] for l in cfg.groupLabels[0:i]]),
        cfg.groupLabels[i],
      ],
      allValue='.*',
    )
    for i in std.range(0, std.length(cfg.groupLabels) - 1)
  ],

  variable(name, label, description, query, allValue='.+'):: {
    name: name,
    label: label,
    description: description,
    type: 'query',
    datasource: ds,
    query: { query: query, refId: name + '-var' },
    definition: query,
    refresh: 2,
    multi: true,
    includeAll: true,
    allValue: allValue,
    current: { selected: true, text: ['All'], value: ['$__all'] },
    sort: 1,
    regex: '',
    hide: 0,
    options: [],
  },

  dashboard(cfg, uid, title, description, panels, links):: {
    uid: uid,
    title: title,
    description: description,
    tags: ['mcp-readiness', 'mcp'],
    timezone: '',
    // Provisioned from the mixin: edit the mixin, not the dashboard.
    editable: false,
    graphTooltip: 1,
    schemaVersion: 39,
    version: 1,
    refresh: cfg.dashboardRefresh,
    time: { from: cfg.dashboardTimeFrom, to: 'now' },
    timepicker: {},
    fiscalYearStartMonth: 0,
    liveNow: false,
    weekStart: '',
    annotations: { list: [{
      builtIn: 1,
      datasource: { type: 'grafana', uid: '-- Grafana --' },
      enable: true,
      hide: true,
      iconColor: 'rgba(0, 211, 255, 1)',
      name: 'Annotations & Alerts',
      type: 'dashboard',
    }] },
    links: links,
    templating: { list: [
      { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {}, hide: 0, refresh: 1, regex: '', includeAll: false, multi: false, options: [] },
    ] + $.groupVariables(cfg) + [
      $.variable('job', 'job', 'Prometheus jobs that scrape mcp-readiness exporters', if std.length(cfg.groupLabels) == 0 then 'label_values(mcp_readiness_build_info, job)' else 'label_values(mcp_readiness_build_info{%s}, job)' % $.groupSel(cfg)),
      $.variable('instance', 'instance', 'Exporters: one `serve`, or one agent replica with the ReadinessLayer', $.scoped(cfg, 'label_values(mcp_readiness_build_info{job=~"$job"}, instance)')),
      $.variable('server', 'server', 'MCP servers by their configured name', $.scoped(cfg, 'label_values(mcp_readiness_server_state{job=~"$job", instance=~"$instance"}, server)')),
    ] },
    panels: $.scopePanels(cfg, panels),
  },
}

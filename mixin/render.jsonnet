// What scripts/render-mixin writes: { path: content }, with `config` (a JSON object) merged
// into _config key by key (std.mergePatch: `{"for": {"MCPServerAbsent": "5s"}}` changes that one
// `for`); the live test renders short `for` values this way.
function(config={})
  local mcp = (import 'mixin.libsonnet') + { _config:: std.mergePatch(super._config, config) };
  {
    'alerts/rules.yml': mcp.prometheusRules,
    'alerts/alerts.yml': mcp.prometheusAlerts,
    'alerts/prometheusrule.yml': mcp.prometheusRule,
  } + {
    ['dashboards/' + name]: mcp.grafanaDashboards[name]
    for name in std.objectFields(mcp.grafanaDashboards)
  }

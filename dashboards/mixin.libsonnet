// mcp-readiness as a monitoring mixin, for jsonnet users (jsonnet >= 0.18 for std.parseYaml):
//
//   local mcp = import 'mcp-readiness/dashboards/mixin.libsonnet';
//   mcp.prometheusRules   // recording rules (alerts/rules.yml)
//   mcp.prometheusAlerts  // alerts (alerts/alerts.yml)
//   mcp.grafanaDashboards // { 'mcp-readiness-fleet.json': {...}, 'mcp-readiness-server.json': {...} }
//
// The YAML and JSON files stay the source of truth (they are what the tests check); this only
// wraps them in the mixin shape so they compose with other mixins, e.g.
//   std.manifestYamlDoc(mcp.prometheusAlerts) or mixtool generate all.
{
  prometheusRules+:: std.parseYaml(importstr '../alerts/rules.yml'),
  prometheusAlerts+:: std.parseYaml(importstr '../alerts/alerts.yml'),
  grafanaDashboards+:: {
    'mcp-readiness-fleet.json': import 'mcp-readiness-fleet.json',
    'mcp-readiness-server.json': import 'mcp-readiness-server.json',
  },
}

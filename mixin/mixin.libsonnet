// mcp-readiness as a monitoring mixin (kubernetes-mixin shape):
//
//   local mcp = (import 'mcp-readiness/mixin/mixin.libsonnet') + { _config+:: { groupLabels: ['cluster'] } };
//   mcp.prometheusRules        // recording rules  (alerts/rules.yml)
//   mcp.prometheusAlerts       // alerts           (alerts/alerts.yml)
//   mcp.prometheusRule         // both as a Prometheus Operator PrometheusRule (alerts/prometheusrule.yml)
//   mcp.grafanaDashboards      // { 'mcp-readiness-fleet.json': {...}, 'mcp-readiness-server.json': {...} }
//
// config.libsonnet lists every `_config` key. The files under alerts/ and dashboards/ are
// rendered from here by scripts/render-mixin, and scripts/test checks they still are.
(import 'config.libsonnet')
+ (import 'rules.libsonnet')
+ (import 'alerts.libsonnet')
+ (import 'forecast.libsonnet')
+ (import 'tls.libsonnet')
+ (import 'dashboards/dashboards.libsonnet')
+ {
  prometheusRule:: {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: {
      name: $._config.prometheusRuleName,
      labels: $._config.prometheusRuleLabels,
    },
    spec: { groups: $.prometheusRules.groups + $.prometheusAlerts.groups },
  },
}

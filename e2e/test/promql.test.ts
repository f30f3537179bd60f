import { metricNamesOf } from './support/promql';

describe('metricNamesOf', () => {
  it('finds the metrics of an expression, not its functions, labels, keywords or numbers', () => {
    expect(
      metricNamesOf(
        'sum by (provider, model) (rate(ai_target_attempts_total{outcome!="success", x=~"a{1}"}[5m])) / ' +
          'sum without (le) (rate(http_requests_total[1h] offset 5m)) > 1e6 and on (job) up == 0',
      ).sort(),
    ).toEqual(['ai_target_attempts_total', 'http_requests_total', 'up']);
    expect(metricNamesOf('histogram_quantile(0.95, sum by (le) (rate(x_seconds_bucket[5m])))')).toEqual([
      'x_seconds_bucket',
    ]);
  });
});

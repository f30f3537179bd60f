/// <reference path="./types/parse-prometheus-text-format.d.ts" />
// parse-prometheus-text-format ships no types; this is the one typed entry the tests use.
import parse from 'parse-prometheus-text-format';

export type PromMetric = {
  value?: string;
  labels?: Record<string, string>;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
};

export type PromFamily = { name: string; help: string; type: string; metrics: PromMetric[] };

/** Parses a /metrics body with an independent Prometheus text-format parser. */
export function parsePrometheusText(text: string): PromFamily[] {
  return (parse as (t: string) => PromFamily[])(text);
}

declare module 'parse-prometheus-text-format' {
  export type PromMetric = {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  };
  export type PromFamily = { name: string; help: string; type: string; metrics: PromMetric[] };
  export default function parsePrometheusTextFormat(text: string): PromFamily[];
}

import { type LoopbackServer, listenLoopback, readBody, sendJson } from './http-server';

/**
 * An OTLP/HTTP trace receiver on loopback for tests: the services' real
 * exporter (OTEL_EXPORTER_OTLP_ENDPOINT=<url>, OTEL_EXPORTER_OTLP_PROTOCOL=http/json)
 * posts to `<url>/v1/traces`, and the test reads the spans back flattened.
 * OTLP/JSON is decoded into `spans`; OTLP/protobuf bodies (the SDK's default
 * protocol) are kept as they came in `protobufBodies`, undecoded, for tests of
 * the protobuf exporter itself. Anything else gets 415.
 */

/** One received span, its attributes as plain values (ints as numbers, arrays as arrays). */
export type ReceivedSpan = {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  /** `service.name` of the resource that sent it. */
  service: string;
  attributes: Record<string, unknown>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  startNs: bigint;
  endNs: bigint;
};

export type OtlpReceiver = LoopbackServer & {
  spans: ReceivedSpan[];
  /** Export requests refused (neither OTLP/JSON nor OTLP/protobuf to POST /v1/traces). */
  refused: number;
  /** Raw bodies of OTLP/protobuf exports (`application/x-protobuf`), in arrival order. */
  protobufBodies: Buffer[];
  /** Waits until `predicate` holds for the spans received so far (or throws after `timeoutMs`). */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  clear(): void;
};

type AnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value?: AnyValue };
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano?: string | number;
  endTimeUnixNano?: string | number;
  attributes?: KeyValue[];
  status?: { code?: number };
  events?: Array<{ name: string; attributes?: KeyValue[] }>;
};
type ExportRequest = {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{ spans?: OtlpSpan[] }>;
  }>;
};

function otlpValue(v: AnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(otlpValue);
  return undefined;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) out[kv.key] = otlpValue(kv.value);
  return out;
}

/** The spans of one OTLP/JSON export request, flattened. */
export function flattenOtlpTraces(body: ExportRequest): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((rs) => {
    const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? '',
        name: s.name,
        kind: s.kind ?? 0,
        service,
        attributes: attributesOf(s.attributes),
        statusCode: s.status?.code ?? 0,
        events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
        startNs: BigInt(s.startTimeUnixNano ?? 0),
        endNs: BigInt(s.endTimeUnixNano ?? 0),
      })),
    );
  });
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let refused = 0;
  const protobufBodies: Buffer[] = [];
  const server = await listenLoopback(async (req, res) => {
    const body = await readBody(req);
    const type = req.headers['content-type'] ?? '';
    const json = type.startsWith('application/json');
    const protobuf = type.startsWith('application/x-protobuf');
    if (req.method !== 'POST' || req.url !== '/v1/traces' || !(json || protobuf)) {
      refused += 1;
      sendJson(res, json || protobuf ? 404 : 415, {
        error: 'send OTLP/JSON or OTLP/protobuf to POST /v1/traces',
      });
      return;
    }
    if (protobuf) {
      protobufBodies.push(body);
      // An empty ExportTraceServiceResponse: zero bytes.
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': '0' }).end();
      return;
    }
    spans.push(...flattenOtlpTraces(JSON.parse(body.toString('utf8')) as ExportRequest));
    sendJson(res, 200, {});
  });
  return {
    url: server.url,
    port: server.port,
    close: server.close,
    spans,
    protobufBodies,
    get refused() {
      return refused;
    },
    clear() {
      spans.length = 0;
      protobufBodies.length = 0;
    },
    async waitFor(predicate, timeoutMs = 5_000) {
      const until = Date.now() + timeoutMs;
      while (!predicate(spans)) {
        if (Date.now() > until) throw new Error(`OTLP receiver: spans not as expected after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return spans;
    },
  };
}

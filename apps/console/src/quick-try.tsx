import type { ErrorBody } from '@platform/contract';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, errorWords } from './api';
import { formatNumber } from './format';
import { errorMessageOf, FORMATS, type QuickTryFormat, type StreamStep } from './quick-try-formats';
import { BusyButton, ErrorText, Field } from './ui';

type SseEvent = { event: string; data: string };

/** Splits a server-sent-events body into events as the bytes arrive (comments dropped). */
async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length > 0) yield { event, data: data.join('\n') };
      end = buffer.indexOf('\n\n');
    }
  }
}

type Done = Extract<StreamStep, { done: unknown }>['done'];

/**
 * One chat message on a lane, answered as a stream, in the wire format
 * chosen (native, OpenAI chat, Anthropic messages, Responses). The key is
 * held in memory for this page only: never stored, never sent anywhere but
 * the gateway's own chat endpoints.
 */
export function QuickTry(props: { lanes: string[]; freshKey: string | null; onDone: () => void }) {
  const [key, setKey] = useState(props.freshKey ?? '');
  const [lane, setLane] = useState(props.lanes[0] ?? 'free');
  const [project, setProject] = useState('console');
  const [message, setMessage] = useState('Say hello in five words.');
  const [answer, setAnswer] = useState('');
  const [format, setFormat] = useState<QuickTryFormat>('native');
  const [done, setDone] = useState<Done | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController | null>(null);

  useEffect(() => {
    if (props.freshKey) setKey(props.freshKey);
  }, [props.freshKey]);
  useEffect(() => () => abort.current?.abort(), []);

  const send = async (event: Event) => {
    event.preventDefault();
    abort.current?.abort();
    const controller = new AbortController();
    abort.current = controller;
    setBusy(true);
    setAnswer('');
    setDone(null);
    setError(null);
    const spec = FORMATS[format];
    const input = { lane, project: project.trim(), message };
    let model = '';
    try {
      const res = await fetch(new URL(spec.path, document.baseURI), {
        method: 'POST',
        // No cookie needed: the API key is the credential here.
        credentials: 'omit',
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'x-api-key': key.trim(),
          ...(spec.projectHeader ? { 'x-project-id': input.project } : {}),
        },
        body: JSON.stringify(spec.body(input)),
        signal: controller.signal,
      });
      if (!res.ok || !res.body) {
        const parsed = (await res.json().catch(() => ({}))) as Partial<ErrorBody>;
        const retry = Number(res.headers.get('retry-after'));
        // The /v1 formats nest the message; the request id is then in the header.
        const body =
          typeof parsed.error === 'string'
            ? parsed
            : { error: errorMessageOf(parsed), request_id: res.headers.get('x-request-id') ?? undefined };
        throw new ApiError(res.status, body, retry > 0 ? retry : undefined);
      }
      for await (const sse of readSse(res.body)) {
        const step = spec.read(sse.event, sse.data);
        if (!step) continue;
        if ('text' in step) setAnswer((text) => text + step.text);
        else if ('model' in step) model = step.model;
        else if ('done' in step) setDone({ ...step.done, model: step.done.model || model || lane });
        else throw new ApiError(502, { error: step.failed });
      }
    } catch (err) {
      if (!controller.signal.aborted) {
        setError(err instanceof TypeError ? 'The gateway could not be reached.' : errorWords(err));
      }
    } finally {
      if (abort.current === controller) {
        abort.current = null;
        setBusy(false);
        props.onDone();
      }
    }
  };

  return (
    <section class="card" id="quick-try" aria-labelledby="quick-try-title">
      <h2 id="quick-try-title">Quick try</h2>
      <p>Send one message with an API key and watch the answer stream in. The key is not stored.</p>
      <form onSubmit={send} class="stack-form">
        <Field
          id="try-key"
          label="API key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          placeholder="gw_…"
          value={key}
          onValue={setKey}
        />
        {props.freshKey && key === props.freshKey && <p class="hint">Using the key you just created.</p>}
        <div class="two-cols">
          <div>
            <label for="try-lane">Lane</label>
            <select id="try-lane" value={lane} onChange={(e) => setLane(e.currentTarget.value)}>
              {props.lanes.map((l) => (
                <option key={l} value={l}>
                  {l}
                </option>
              ))}
            </select>
          </div>
          <div>
            <Field
              id="try-project"
              label="Project id"
              required
              maxLength={128}
              value={project}
              onValue={setProject}
            />
          </div>
        </div>
        <label for="try-format">Format</label>
        <select
          id="try-format"
          value={format}
          onChange={(e) => setFormat(e.currentTarget.value as QuickTryFormat)}
        >
          {(Object.keys(FORMATS) as QuickTryFormat[]).map((f) => (
            <option key={f} value={f}>
              {FORMATS[f].label}
            </option>
          ))}
        </select>
        <label for="try-message">Message</label>
        <textarea
          id="try-message"
          required
          rows={3}
          value={message}
          onInput={(e) => setMessage(e.currentTarget.value)}
        />
        <BusyButton busy={busy} busyLabel="Answering…">
          Send
        </BusyButton>
      </form>
      <h3>Answer</h3>
      <output class="answer" aria-live="polite" data-testid="answer" for="try-message">
        {answer || (busy ? '…' : '')}
      </output>
      {done && (
        <p class="hint" data-testid="answer-meta">
          Model {done.model}, {formatNumber(done.totalTokens)} tokens ({done.finish}).
        </p>
      )}
      <ErrorText error={error} />
    </section>
  );
}

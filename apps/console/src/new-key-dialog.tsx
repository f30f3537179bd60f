import type { CreateApiKeyResponse } from '@platform/contract';
import { useRef, useState } from 'preact/hooks';
import { Modal } from './dialog';

/** Copies with the Clipboard API, or by selecting the text where that is unavailable. */
async function copyText(text: string, fallback: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    fallback?.select();
    return false;
  }
}

/** The gateway's base URL as this page sees it (the console is served by the gateway). */
function baseUrl(): string {
  return window.location.origin;
}

/** How to call the API with a new key: base URLs, both headers, curl and the OpenAI SDK. */
function HowToCall(props: { keyValue: string }) {
  const base = baseUrl();
  const curl = `curl ${base}/v1/chat/completions \\
  -H "Authorization: Bearer ${props.keyValue}" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "free", "messages": [{"role": "user", "content": "Hello"}]}'`;
  const sdk = `import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${base}/v1', apiKey: '${props.keyValue}' });
const answer = await client.chat.completions.create({
  model: 'free',
  messages: [{ role: 'user', content: 'Hello' }],
});`;
  return (
    <section class="how-to-call" aria-labelledby="how-to-call-title" data-testid="how-to-call">
      <h3 id="how-to-call-title">How to call it</h3>
      <dl class="facts">
        <dt>OpenAI-compatible base URL</dt>
        <dd>
          <code>{base}/v1</code>
        </dd>
        <dt>Gateway API</dt>
        <dd>
          <code>{base}/api/v1</code> (<a href="./docs">API reference</a>)
        </dd>
        <dt>Send the key as</dt>
        <dd>
          <code>Authorization: Bearer &lt;key&gt;</code> or <code>x-api-key: &lt;key&gt;</code>
        </dd>
      </dl>
      <h4>curl</h4>
      <pre>
        <code>{curl}</code>
      </pre>
      <h4>OpenAI SDK (Node)</h4>
      <pre>
        <code>{sdk}</code>
      </pre>
      <p class="hint">
        <code>model</code> is a lane (<code>free</code>), or one of its models as <code>GET /v1/models</code>{' '}
        lists them.
      </p>
    </section>
  );
}

/** A new key's plaintext, shown once, with a Copy button and how to call the API with it. */
export function NewKeyDialog(props: {
  created: CreateApiKeyResponse;
  onClose: () => void;
  returnFocus: () => HTMLElement | null;
}) {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    const ok = await copyText(props.created.key, input.current);
    setCopied(ok ? 'Copied to the clipboard.' : 'Selected: press Ctrl+C (or ⌘C) to copy.');
  };
  return (
    <Modal
      title={`API key “${props.created.name}” created`}
      onClose={props.onClose}
      returnFocus={props.returnFocus}
    >
      <p class="warning">
        <strong>Copy this key now: you will not see it again.</strong> The gateway keeps only a hash of it.
      </p>
      <label for="new-key">Your new API key</label>
      <div class="copy-row">
        <input
          id="new-key"
          ref={input}
          readOnly
          value={props.created.key}
          data-testid="new-key"
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <p role="status" aria-live="polite" class="hint">
        {copied}
      </p>
      <HowToCall keyValue={props.created.key} />
      <div class="actions">
        <button type="button" autofocus onClick={props.onClose}>
          I have copied it
        </button>
      </div>
    </Modal>
  );
}

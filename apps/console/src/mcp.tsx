import type { ApiKeySummary, ListMcpToolsResponse, McpServerView } from '@platform/contract';
import { useCallback, useState } from 'preact/hooks';
import { api } from './api';
import { BusyButton, Card, ErrorText, Field, onSubmit, useAction, useLoad } from './ui';

type Tools = ListMcpToolsResponse['tools'];

/** Policy entries as the form edits them: one per line. */
const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');

function ServerList(props: {
  servers: McpServerView[];
  onChanged: () => void;
  onAuthLost: (e: unknown) => void;
}) {
  const [tools, setTools] = useState<Record<string, Tools>>({});
  const showing = useAction(
    async (name: string) => {
      const list = await api.mcpServerTools(name);
      setTools((t) => ({ ...t, [name]: list }));
    },
    { onError: props.onAuthLost },
  );
  const removing = useAction(
    async (name: string) => {
      await api.deleteMcpServer(name);
      props.onChanged();
    },
    { onError: props.onAuthLost },
  );
  if (props.servers.length === 0) return <p>No MCP servers yet.</p>;
  return (
    <>
      <ul class="plain-list" aria-label="MCP servers">
        {props.servers.map((s) => (
          <li key={s.name} data-mcp-server={s.name}>
            <span>
              <b>{s.name}</b>{' '}
              <span class="hint">{s.source === 'user' ? `yours, ${s.url}` : 'from the operator'}</span>
              {s.credential_headers.length > 0 && (
                <span class="hint"> · credential: {s.credential_headers.join(', ')}</span>
              )}
            </span>
            <button type="button" class="secondary small" onClick={() => void showing.run(s.name)}>
              Show tools
            </button>
            {s.source === 'user' && (
              <button type="button" class="danger small" onClick={() => void removing.run(s.name)}>
                Remove
              </button>
            )}
            {tools[s.name] && (
              <ul aria-label={`Tools of ${s.name}`} data-testid={`mcp-tools-${s.name}`}>
                {tools[s.name]?.map((t) => (
                  <li key={t.name}>
                    <code>{t.exposed_name}</code> {t.description && <span class="hint">{t.description}</span>}
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ul>
      <ErrorText error={showing.error ?? removing.error} />
    </>
  );
}

function RegisterForm(props: {
  onRegistered: (tools: Tools, name: string) => void;
  onAuthLost: (e: unknown) => void;
}) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [transport, setTransport] = useState<'streamable-http' | 'sse'>('streamable-http');
  const [header, setHeader] = useState('');
  const [secret, setSecret] = useState('');
  const registering = useAction(
    async () => {
      const headers = header.trim() && secret ? { [header.trim()]: secret } : {};
      const res = await api.registerMcpServer({ name: name.trim(), url: url.trim(), transport, headers });
      setSecret('');
      props.onRegistered(res.tools, res.server.name);
    },
    { onError: props.onAuthLost },
  );
  return (
    <form onSubmit={onSubmit(registering.run)} class="stack-form" aria-label="Register an MCP server">
      <Field id="mcp-name" label="Name" required maxLength={32} value={name} onValue={setName} />
      <Field id="mcp-url" label="URL" type="url" required value={url} onValue={setUrl} />
      <label for="mcp-transport">Transport</label>
      <select
        id="mcp-transport"
        value={transport}
        onChange={(e) => setTransport(e.currentTarget.value === 'sse' ? 'sse' : 'streamable-http')}
      >
        <option value="streamable-http">Streamable HTTP</option>
        <option value="sse">HTTP+SSE (older)</option>
      </select>
      <Field id="mcp-header" label="Credential header (optional)" value={header} onValue={setHeader} />
      <Field
        id="mcp-secret"
        label="Credential value"
        type="password"
        autocomplete="off"
        value={secret}
        onValue={setSecret}
      />
      <BusyButton busy={registering.busy} busyLabel="Checking the server…">
        Register server
      </BusyButton>
      <ErrorText error={registering.error} />
    </form>
  );
}

function KeyPolicyForm(props: { keys: ApiKeySummary[]; onAuthLost: (e: unknown) => void }) {
  const [keyId, setKeyId] = useState('');
  const [allow, setAllow] = useState('');
  const [deny, setDeny] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  // The key's policy is being read: the lists are not editable until it is in.
  const [loading, setLoading] = useState(false);
  const choose = async (id: string) => {
    setKeyId(id);
    setStatus(null);
    setLoading(true);
    try {
      const policy = (await api.listMcpPolicies()).find((p) => p.scope === 'api_key' && p.subject === id);
      setAllow(policy?.allow?.join('\n') ?? '');
      setDeny(policy?.deny.join('\n') ?? '');
    } catch (err) {
      props.onAuthLost(err);
    } finally {
      setLoading(false);
    }
  };
  const saving = useAction(
    async () => {
      const allowed = lines(allow);
      await api.setMcpPolicy({
        scope: 'api_key',
        subject: keyId,
        allow: allowed.length > 0 ? allowed : null,
        deny: lines(deny),
      });
      setStatus('Saved. Open MCP sessions of this key follow within seconds.');
    },
    { onError: props.onAuthLost },
  );
  return (
    <form onSubmit={onSubmit(saving.run)} class="stack-form" aria-label="Allowed MCP tools of a key">
      <label for="mcp-key">API key</label>
      <select id="mcp-key" required value={keyId} onChange={(e) => void choose(e.currentTarget.value)}>
        <option value="">Choose a key</option>
        {props.keys.map((k) => (
          <option key={k.key_id} value={k.key_id}>
            {k.name} ({k.key_prefix}…)
          </option>
        ))}
      </select>
      <label for="mcp-allow">
        Allowed (one per line: server, server/tool or server/prefix*; empty: the defaults)
      </label>
      <textarea
        id="mcp-allow"
        rows={4}
        disabled={loading}
        value={allow}
        onInput={(e) => setAllow(e.currentTarget.value)}
      />
      <label for="mcp-deny">Denied (wins over allowed)</label>
      <textarea
        id="mcp-deny"
        rows={3}
        disabled={loading}
        value={deny}
        onInput={(e) => setDeny(e.currentTarget.value)}
      />
      <BusyButton busy={saving.busy || loading} busyLabel="Saving…" disabled={!keyId}>
        Save allowed tools
      </BusyButton>
      <p role="status" aria-live="polite">
        {status}
      </p>
      <ErrorText error={saving.error} />
    </form>
  );
}

/**
 * MCP servers (docs/mcp.md): the operator's and your own, their tools, a
 * registration form (the gateway checks the server first), and which tools
 * each API key may list and call.
 */
export function Mcp(props: { onAuthLost: (err: unknown) => void; keysVersion?: unknown }) {
  const { onAuthLost } = props;
  const servers = useLoad(api.listMcpServers, onAuthLost);
  // Read again when a key is created on the page, so the new key can be given tools at once.
  const keys = useLoad(api.listKeys, onAuthLost, props.keysVersion);
  const [registered, setRegistered] = useState<string | null>(null);
  const onRegistered = useCallback(
    (tools: Tools, name: string) => {
      setRegistered(
        `Registered ${name} with ${tools.length} tool${tools.length === 1 ? '' : 's'}: ${tools.map((t) => t.exposed_name).join(', ')}.`,
      );
      void servers.load();
    },
    [servers],
  );
  return (
    <Card id="mcp" title="MCP servers">
      <p>
        Tools for your agents through one endpoint, <code>/mcp</code>, with an API key. Credentials you give
        are stored encrypted and only ever sent to that server.
      </p>
      <ErrorText error={servers.error ?? keys.error} />
      {servers.data && (
        <ServerList servers={servers.data} onChanged={() => void servers.load()} onAuthLost={onAuthLost} />
      )}
      <h3>Register a server</h3>
      <RegisterForm onRegistered={onRegistered} onAuthLost={onAuthLost} />
      <p role="status" aria-live="polite" data-testid="mcp-registered">
        {registered}
      </p>
      <h3>Allowed tools per API key</h3>
      <KeyPolicyForm keys={(keys.data ?? []).filter((k) => k.status === 'active')} onAuthLost={onAuthLost} />
    </Card>
  );
}

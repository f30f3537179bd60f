import type { GatewayConfigResponse, SessionResponse } from '@platform/contract';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, api, errorWords } from './api';
import { ApiKeys } from './api-keys';
import { Budgets } from './budgets';
import { Mcp } from './mcp';
import { ProviderKeys } from './provider-keys';
import { QuickTry } from './quick-try';
import { FinishSignIn, SignInForm } from './sign-in';
import { Spend } from './spend';
import { ErrorText } from './ui';
import { Usage } from './usage';

/** The sign-in code the mailed link carries, if the page was opened from one. */
function codeFromUrl(): string | null {
  return new URLSearchParams(window.location.search).get('code');
}

/** Takes the code out of the address bar and history once it is used or dismissed. */
function forgetCode(): void {
  window.history.replaceState(null, '', window.location.pathname);
}

export function App() {
  const [config, setConfig] = useState<GatewayConfigResponse | null>(null);
  const [session, setSession] = useState<SessionResponse | null | undefined>(undefined);
  const [code, setCode] = useState(codeFromUrl);
  const [error, setError] = useState<string | null>(null);
  // The plaintext of a key created on this page, in memory only, for the quick try.
  const [freshKey, setFreshKey] = useState<string | null>(null);
  const [usageVersion, setUsageVersion] = useState(0);

  const loadSession = useCallback(async () => {
    try {
      setSession(await api.session());
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setSession(null);
      else {
        setSession(null);
        setError(errorWords(err));
      }
    }
  }, []);

  useEffect(() => {
    // The session is asked for only when a session cookie came along: signed out,
    // the page makes no request that answers 401 (the browser would log it).
    api.config().then(
      (loaded) => {
        setConfig(loaded);
        if (loaded.session_cookie) void loadSession();
        else setSession(null);
      },
      (err: unknown) => {
        setError(errorWords(err));
        void loadSession();
      },
    );
  }, [loadSession]);

  const onAuthLost = useCallback((err: unknown) => {
    if (err instanceof ApiError && err.code === 'missing_authentication') {
      setSession(null);
      setFreshKey(null);
    }
  }, []);

  const signOut = async () => {
    try {
      await api.logout();
    } catch (err) {
      setError(errorWords(err));
      return;
    }
    setSession(null);
    setFreshKey(null);
    document.getElementById('main')?.focus();
  };

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <h1>AI Gateway console</h1>
        {session && (
          <div class="who">
            <span>
              Signed in as <b data-testid="signed-in-email">{session.email}</b>
            </span>
            <button type="button" class="secondary small" onClick={signOut}>
              Sign out
            </button>
          </div>
        )}
      </header>
      {session && (
        <nav aria-label="Sections" class="sections">
          <a href="#api-keys">API keys</a>
          <a href="#provider-keys">Provider keys</a>
          <a href="#usage">Usage</a>
          <a href="#mcp">MCP</a>
          <a href="#quick-try">Quick try</a>
        </nav>
      )}
      <main id="main" tabIndex={-1}>
        <ErrorText error={error} />
        {code && (
          <FinishSignIn
            code={code}
            onSignedIn={() => {
              forgetCode();
              setCode(null);
              void loadSession();
            }}
            onDiscard={() => {
              forgetCode();
              setCode(null);
            }}
          />
        )}
        {session === undefined && !code && <p>Loading…</p>}
        {session === null && !code && <SignInForm config={config} />}
        {session && (
          <>
            <ApiKeys maxKeys={config?.max_api_keys ?? 5} onCreated={setFreshKey} onAuthLost={onAuthLost} />
            <ProviderKeys providers={config?.providers} onAuthLost={onAuthLost} />
            <Usage refreshKey={usageVersion} onAuthLost={onAuthLost} />
            <Spend refreshKey={usageVersion} onAuthLost={onAuthLost} />
            <Budgets onAuthLost={onAuthLost} />
            <Mcp onAuthLost={onAuthLost} keysVersion={freshKey} />
            <QuickTry
              lanes={config?.lanes ?? ['free']}
              freshKey={freshKey}
              onDone={() => setUsageVersion((v) => v + 1)}
            />
          </>
        )}
      </main>
      <footer class="foot">
        <a href="./docs">API reference</a> (<a href="./openapi.json">OpenAPI document</a>)
      </footer>
    </>
  );
}

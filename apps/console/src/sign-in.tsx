import type { GatewayConfigResponse } from '@platform/contract';
import { useState } from 'preact/hooks';
import { api, errorWords } from './api';

/** Where the link went, in words a person can act on. */
function LinkNotice(props: { config: GatewayConfigResponse | null; email: string }) {
  if (props.config?.mail_delivery === 'log') {
    return (
      <p>
        This gateway has no mail server configured (development), so the link for <b>{props.email}</b> was not
        mailed: <strong>it was written to the gateway's output</strong> (the terminal running{' '}
        <code>npm start</code>, between the <code>DEVELOPMENT ONLY</code> lines). Open it in this browser.
      </p>
    );
  }
  const minutes = props.config?.magic_link_ttl_minutes;
  return (
    <p>
      If <b>{props.email}</b> can sign in, a link is on its way. It works once
      {minutes ? `, for ${minutes} minutes` : ''}. Open it in this browser.
    </p>
  );
}

/** E-mail in, magic link out. */
export function SignInForm(props: { config: GatewayConfigResponse | null }) {
  const [email, setEmail] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.requestLink({ email: email.trim() });
      setSentTo(email.trim());
    } catch (err) {
      setError(errorWords(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="sign-in-title">
      <h2 id="sign-in-title">Sign in</h2>
      <p>We send you a one-time link; no password needed.</p>
      {props.config?.mail_delivery === 'log' && (
        <p class="note">
          Development mode: no SMTP server is configured, so sign-in links are written to the gateway's output
          instead of being mailed.
        </p>
      )}
      <form onSubmit={submit}>
        <label for="email">E-mail address</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="email"
          required
          maxLength={254}
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Sending…' : 'Email me a sign-in link'}
        </button>
      </form>
      <div role="status" aria-live="polite">
        {sentTo && <LinkNotice config={props.config} email={sentTo} />}
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

/**
 * What the mailed link opens. Opening it spends nothing: only the button
 * posts the code, so mail scanners that fetch (or even render) links cannot
 * use it up.
 */
export function FinishSignIn(props: { code: string; onSignedIn: () => void; onDiscard: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const finish = async () => {
    setBusy(true);
    setError(null);
    try {
      await api.verifyCode({ code: props.code });
      props.onSignedIn();
    } catch (err) {
      setError(errorWords(err));
      setBusy(false);
    }
  };
  return (
    <section class="card" aria-labelledby="finish-title">
      <h2 id="finish-title">Finish signing in</h2>
      <p>You opened a sign-in link. Press the button to sign in on this browser.</p>
      <div class="actions">
        <button type="button" autofocus disabled={busy} onClick={finish}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <button type="button" class="secondary" onClick={props.onDiscard}>
          Not now
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

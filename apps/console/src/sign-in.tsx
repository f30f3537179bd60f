import type { GatewayConfigResponse } from '@platform/contract';
import { useState } from 'preact/hooks';
import { api } from './api';
import { BusyButton, ErrorText, Field, onSubmit, useAction } from './ui';

/** Single sign-on (docs/teams.md#single-sign-on): a browser navigation to the provider and back. */
const SSO_START = new URL('api/v1/auth/sso/start', document.baseURI);

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
  const sending = useAction(async () => {
    await api.requestLink({ email: email.trim() });
    setSentTo(email.trim());
  });

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
      <form onSubmit={onSubmit(sending.run)}>
        <Field
          id="email"
          label="E-mail address"
          name="email"
          type="email"
          autocomplete="email"
          required
          maxLength={254}
          value={email}
          onValue={setEmail}
        />
        <BusyButton busy={sending.busy} busyLabel="Sending…">
          Email me a sign-in link
        </BusyButton>
      </form>
      <div role="status" aria-live="polite">
        {sentTo && <LinkNotice config={props.config} email={sentTo} />}
      </div>
      <ErrorText error={sending.error} />
      {props.config?.sso && (
        <p>
          {/* A link, not a form: the start answers a redirect to the identity provider, which form-action 'self' would block. */}
          <a class="button secondary" href={SSO_START.href}>
            Sign in with SSO
          </a>
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
  const finishing = useAction(async () => {
    await api.verifyCode({ code: props.code });
    props.onSignedIn();
  });
  return (
    <section class="card" aria-labelledby="finish-title">
      <h2 id="finish-title">Finish signing in</h2>
      <p>You opened a sign-in link. Press the button to sign in on this browser.</p>
      <div class="actions">
        <BusyButton
          type="button"
          autofocus
          busy={finishing.busy}
          busyLabel="Signing in…"
          onClick={finishing.run}
        >
          Sign in
        </BusyButton>
        <button type="button" class="secondary" onClick={props.onDiscard}>
          Not now
        </button>
      </div>
      <ErrorText error={finishing.error} />
    </section>
  );
}

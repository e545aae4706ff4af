// Signing in, as every user does and then some: the phone, the SMS code (auth-send-otp, context
// login), the password (auth-verify), then the second factor, the code of the operator's
// authenticator (admin-totp-verify). An operator without a factor sets one up here first
// (admin-totp-enrol: the QR code and the otpauth URI, shown once).
import { useState } from './vendor/hooks.mjs';
import { anonymous, call, markPassed, session, signIn, signOut } from './api.js';
import { html, RefusalView, Title } from './ui.js';

/** Runs an async action for a form: busy while it runs, its refusal kept for the page. */
function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const run = (fn) => async (e) => {
    e?.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

export function SignIn({ onPassed }) {
  const s = session();
  const [step, setStep] = useState(s ? 'totp' : 'phone');
  const [phone, setPhone] = useState('');
  const [sent, setSent] = useState(null);
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useAction();

  if (step === 'totp') return html`<${SecondFactor} onPassed=${onPassed} onRestart=${() => setStep('phone')} />`;

  const sendCode = run(async () => {
    setSent(await anonymous('auth-send-otp', { method: 'POST', body: { phone, context: 'login' } }));
    setStep('code');
  });
  const verify = run(async () => {
    await signIn(phone, code, password);
    setPassword('');
    setStep('totp');
  });

  return html`
    <section class="narrow">
      <${Title}>Sign in</${Title}>
      ${step === 'phone'
        ? html`
          <form onSubmit=${sendCode}>
            <p>Operators sign in with the phone of their account, a code sent to it by SMS, their password, then
              the code of their authenticator.</p>
            <label for="phone">Phone number</label>
            <input id="phone" name="phone" type="tel" autocomplete="tel" required value=${phone}
              onInput=${(e) => setPhone(e.currentTarget.value)} placeholder="08031234567" />
            <div class="actions"><button type="submit" disabled=${busy}>Send the code by SMS</button></div>
          </form>
        `
        : html`
          <form onSubmit=${verify}>
            <p>A code was sent to <strong>${phone}</strong>; it is valid for ${Math.round(
              (sent?.expires_in ?? 600) / 60,
            )}
              minutes.</p>
            <label for="otp">SMS code</label>
            <input id="otp" name="otp" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6"
              required value=${code} onInput=${(e) => setCode(e.currentTarget.value.trim())} />
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required
              value=${password} onInput=${(e) => setPassword(e.currentTarget.value)} />
            <div class="actions">
              <button type="submit" disabled=${busy}>Sign in</button>
              <button type="button" class="secondary" onClick=${() => (setStep('phone'), setCode(''))}>
                Use another phone
              </button>
            </div>
          </form>
        `}
      <${RefusalView} error=${error} />
    </section>
  `;
}

/** The authenticator's code, and the enrolment for an operator who has no factor yet. */
function SecondFactor({ onPassed, onRestart }) {
  const [code, setCode] = useState('');
  const [enrolment, setEnrolment] = useState(null);
  const { busy, error, run } = useAction();

  const verify = run(async () => {
    const r = await call('admin-totp-verify', { method: 'POST', body: { code } });
    markPassed(r.expires_at, r.roles);
    onPassed();
  });
  const enrol = run(async () => setEnrolment(await call('admin-totp-enrol', { method: 'POST' })));
  const restart = async () => {
    await signOut();
    onRestart();
  };
  const secret = enrolment ? new URL(enrolment.otpauth_uri).searchParams.get('secret') : null;

  return html`
    <section class="factor">
      <${Title}>Second factor</${Title}>
      <p>Signed in as <strong>${session()?.user.phone}</strong>. Operator pages need the 6-digit code your authenticator
        app shows now.</p>
      ${enrolment
        ? html`
          <div class="enrolment">
            <h2>Set up your authenticator</h2>
            <p>Scan this QR code with an authenticator app (RFC 6238 TOTP), or enter the key by hand. It is shown
              this once: the code you enter below makes it your factor.</p>
            <div class="pair">
              <img class="qr" alt="QR code of your authenticator key" width="200" height="200"
                src=${`data:image/svg+xml;charset=utf-8,${encodeURIComponent(enrolment.qr_svg)}`} />
              <dl>
                <dt>Key</dt>
                <dd><code id="totp-secret">${secret}</code></dd>
                <dt>otpauth URI</dt>
                <dd><code id="otpauth-uri" class="wrap">${enrolment.otpauth_uri}</code></dd>
              </dl>
            </div>
          </div>
        `
        : html`
          <p>First sign-in as an operator?
            <button type="button" class="secondary" onClick=${enrol} disabled=${busy}>Set up an authenticator</button>
          </p>
        `}
      <form onSubmit=${verify}>
        <label for="totp">Authenticator code</label>
        <input id="totp" name="totp" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6"
          required value=${code} onInput=${(e) => setCode(e.currentTarget.value.trim())} />
        <div class="actions">
          <button type="submit" disabled=${busy}>Verify</button>
          <button type="button" class="secondary" onClick=${restart}>Sign in as someone else</button>
        </div>
      </form>
      <${RefusalView} error=${error} />
    </section>
  `;
}

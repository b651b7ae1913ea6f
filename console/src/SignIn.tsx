// Sign in with a project API key. It is tried (GET /v1/agents) before it is
// kept, so a wrong key is told at once rather than on the first page.
import { useState } from 'preact/hooks';
import { makeClient, problemText, signIn, signOutReason } from './api';
import { ErrorAlert } from './ui';

export function SignIn() {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(signOutReason);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const apiKey = key.trim();
    if (!apiKey) {
      setError('Enter an API key.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await makeClient(apiKey).GET('/v1/agents', { params: { query: { limit: 1 } } });
      signIn(apiKey);
    } catch (caught) {
      setError(problemText(caught) ?? 'The key could not be checked.');
      setBusy(false);
    }
  };

  return (
    <>
      <header class="site-header">
        <span class="brand">Palai console</span>
      </header>
      <main id="main" class="narrow">
        <h1>Sign in to the console</h1>
        <p>Sign in with a project API key (palai_sk_…). It is kept for this browser session only.</p>
        <form class="stack" onSubmit={(event) => void submit(event)}>
          <label for="api-key">API key</label>
          <input
            id="api-key"
            type="password"
            autoComplete="current-password"
            spellcheck={false}
            value={key}
            onInput={(event) => setKey(event.currentTarget.value)}
          />
          <div class="buttons">
            <button type="submit" class="primary" disabled={busy}>
              Sign in
            </button>
          </div>
          <ErrorAlert error={error} />
        </form>
      </main>
    </>
  );
}

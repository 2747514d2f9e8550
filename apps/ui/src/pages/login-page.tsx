/** Turns an API key into a browser session (an HttpOnly cookie); the key itself is never stored by the page. */
import { useState } from 'preact/hooks';
import { ApiError, kairosApi } from '../data/kairos-api.js';

export function LoginPage({ onLoggedIn }: { onLoggedIn: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <main id="main" class="login">
      <h1>Kairos</h1>
      <p>This API needs a key. Log in with one; the dashboard then shows its namespace only.</p>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const key = String(new FormData(event.currentTarget).get('apiKey') ?? '').trim();
          setBusy(true);
          setError(null);
          try {
            await kairosApi.login(key);
            onLoggedIn();
          } catch (failure) {
            setError(failure instanceof ApiError ? failure.message : String(failure));
          } finally {
            setBusy(false);
          }
        }}
      >
        <label for="api-key">API key</label>
        <input id="api-key" name="apiKey" type="password" autoComplete="off" required placeholder="kairos_…" aria-describedby={error ? 'login-error' : undefined} />
        <button type="submit" disabled={busy}>
          Log in
        </button>
        {error && (
          <p id="login-error" role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}

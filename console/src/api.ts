// The API client and the key it signs with. The key lives in sessionStorage
// only (gone with the browser session, never in localStorage or the URL), and
// the hub is this page's own origin.
import { createPalai, PalaiApiError, PalaiConnectionError, type Palai } from '@palai/sdk';
import { useEffect, useState } from 'preact/hooks';

const STORAGE_KEY = 'palai.apiKey';

let client: Palai | null = null;
let signedOutBecause: string | null = null;
const listeners = new Set<() => void>();

function notify(): void {
  for (const listener of listeners) listener();
}

export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null; // Storage refused (a privacy mode): not signed in.
  }
}

export function makeClient(apiKey: string): Palai {
  return createPalai({ baseUrl: window.location.origin, apiKey });
}

/** The signed-in client; pages are only shown when there is a key. */
export function palai(): Palai {
  if (!client) {
    const key = storedKey();
    if (!key) throw new Error('Not signed in.');
    client = makeClient(key);
  }
  return client;
}

export function signIn(key: string): void {
  sessionStorage.setItem(STORAGE_KEY, key);
  client = makeClient(key);
  signedOutBecause = null;
  notify();
}

export function signOut(reason: string | null = null): void {
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // Nothing stored.
  }
  client = null;
  signedOutBecause = reason;
  notify();
}

/** Why the last sign-out happened when the hub caused it (a key it no longer accepts). */
export function signOutReason(): string | null {
  return signedOutBecause;
}

export function useSignedIn(): boolean {
  const [signedIn, setSignedIn] = useState(() => storedKey() !== null);
  useEffect(() => {
    const listener = () => setSignedIn(storedKey() !== null);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return signedIn;
}

function isAbort(error: unknown): boolean {
  return error instanceof DOMException && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

/** The text of a problem (its detail); null for an abort, which is no problem. */
export function problemText(error: unknown): string | null {
  if (isAbort(error)) return null;
  if (error instanceof PalaiApiError) return error.detail ?? error.title;
  if (error instanceof PalaiConnectionError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** problemText, and a 401 signs out: the key is no good any more. */
export function report(error: unknown): string | null {
  const text = problemText(error);
  if (error instanceof PalaiApiError && error.status === 401) signOut(text);
  return text;
}

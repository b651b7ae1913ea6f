// Loading what a page shows: one fetcher, re-run on a timer while the page is
// mounted (the timer stops, and the request in flight is aborted, when it is
// left or its inputs change), and again on demand after an action.
import { useEffect, useState } from 'preact/hooks';
import { PalaiApiError } from '@palai/sdk';
import { report } from './api';

/** A 4xx other than 429 answers the same until something changes: reading again on a timer only repeats it. */
export function settledProblem(error: unknown): boolean {
  return error instanceof PalaiApiError && error.status >= 400 && error.status < 500 && error.status !== 429;
}

export interface Resource<T> {
  data: T | undefined;
  error: string | null;
  reload: () => void;
}

export function useResource<T>(fetcher: (signal: AbortSignal) => Promise<T>, deps: unknown[], intervalMs?: number): Resource<T> {
  const [state, setState] = useState<{ data: T | undefined; error: string | null }>({ data: undefined, error: null });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const controller = new AbortController();
    const run = async () => {
      let again = intervalMs !== undefined;
      try {
        const data = await fetcher(controller.signal);
        if (!stopped) setState({ data, error: null });
      } catch (error) {
        // A passing problem (an outage) keeps what was shown; a settled one (a 404) replaces it.
        const settled = settledProblem(error);
        if (settled) again = false;
        const text = stopped ? null : report(error);
        if (text !== null) setState((previous) => ({ data: settled ? undefined : previous.data, error: text }));
      } finally {
        // The next read is timed from the end of this one: never two at once.
        if (!stopped && again) timer = setTimeout(() => void run(), intervalMs);
      }
    };
    void run();
    return () => {
      stopped = true;
      clearTimeout(timer);
      controller.abort();
    };
  }, [...deps, round]);
  return { ...state, reload: () => setRound((n) => n + 1) };
}

/** A button's action: busy while it runs, its problem kept for a role="alert". */
export function useAction(): { busy: boolean; error: string | null; run: (action: () => Promise<unknown>) => Promise<boolean> } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (action: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (caught) {
      setError(report(caught));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

/** The value once it has stopped changing for `ms`: a filter typed letter by letter is read once, not per letter. */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

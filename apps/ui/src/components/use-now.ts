/** The current time in epoch milliseconds, re-read every `everyMs` while that is not null (for durations that grow while something runs). */
import { useEffect, useState } from 'preact/hooks';

export function useNow(everyMs: number | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    setNow(Date.now());
    if (everyMs === null) return;
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

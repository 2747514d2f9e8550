/**
 * The commands that are clients of the API (apply, signal): one request to the Kairos at
 * KAIROS_URL (default http://127.0.0.1:3000), with KAIROS_API_KEY as its bearer key when set.
 */
export class ApiRequestError extends Error {}

export interface ApiAnswer<T> {
  status: number;
  ok: boolean;
  body: (T & { code?: string; message?: string; field?: string | null }) | null;
}

export async function apiRequest<T>(env: Record<string, string | undefined>, method: string, path: string, body: unknown): Promise<ApiAnswer<T>> {
  const baseUrl = (env.KAIROS_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (env.KAIROS_API_KEY) headers.authorization = `Bearer ${env.KAIROS_API_KEY}`;
  let response: Response;
  try {
    response = await fetch(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    const cause = (error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message;
    throw new ApiRequestError(`cannot reach Kairos at ${baseUrl} (${cause}); set KAIROS_URL`);
  }
  return { status: response.status, ok: response.ok, body: (await response.json().catch(() => null)) as ApiAnswer<T>['body'] };
}

/** The refusal of an answer that is not ok, in one line; an unauthorised one names KAIROS_API_KEY. */
export function refusalMessage(answer: ApiAnswer<unknown>): string {
  const message = answer.body?.message ?? `Kairos answered ${answer.status}`;
  return answer.status === 401 || answer.status === 403 ? `${message} (KAIROS_API_KEY)` : message;
}

/** Thrown by a handler when retrying cannot help (bad input, a refused request): the run goes dead after this attempt. */
export class NonRetryableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NonRetryableError';
  }
}

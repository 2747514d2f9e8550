/**
 * Browser sessions: POST /auth/login turns an API key into an HttpOnly session cookie plus a CSRF
 * token the page echoes on writes; POST /auth/logout ends it. GET /auth/login is a small form for
 * people reaching Bull Board (or the dashboard) without a session. Sessions live in Postgres,
 * hashed, and end at logout, at expiry (KAIROS_SESSION_TTL) or when their key is revoked.
 */
import { randomBytes } from 'node:crypto';
import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { KairosConfig } from '@kairos/config';
import { AccessError, ValidationError, hashSecret, isObject } from '@kairos/domain';
import { LoginSessionRepository, type Db } from '@kairos/ledger';
import { DATABASE, KAIROS_CONFIG, PublicRoute } from '@kairos/process';
import { Authenticator } from './authenticator.js';
import { SESSION_COOKIE, clearedSessionCookies, cookieValue, sessionCookies } from './session-cookies.js';

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Kairos: log in</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
</head>
<body>
  <main>
    <h1>Kairos</h1>
    <form id="login">
      <label>API key <input name="apiKey" type="password" autocomplete="off" required size="70" placeholder="kairos_..."></label>
      <button type="submit">Log in</button>
    </form>
    <p id="error" role="alert"></p>
  </main>
  <script src="login.js"></script>
</body>
</html>
`;

// Posts the key as JSON and goes where ?next= says, when that is a path on this site.
const SCRIPT = `document.getElementById('login').addEventListener('submit', async (event) => {
  event.preventDefault();
  const apiKey = new FormData(event.target).get('apiKey');
  const response = await fetch('login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiKey }) });
  if (!response.ok) {
    document.getElementById('error').textContent = (await response.json()).message;
    return;
  }
  const next = new URLSearchParams(location.search).get('next');
  location.assign(next && /^\\/(?!\\/)/.test(next) ? next : '/admin/queues');
});
`;

export interface LoginView {
  csrfToken: string;
  expiresAt: string;
  scopes: string[];
}

@Controller('auth')
@PublicRoute()
export class LoginController {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    private readonly authenticator: Authenticator,
    private readonly sessions: LoginSessionRepository,
  ) {}

  @Get('login')
  page(@Res() res: Response): void {
    res.type('html').send(PAGE);
  }

  @Get('login.js')
  script(@Res() res: Response): void {
    res.type('text/javascript').send(SCRIPT);
  }

  /** 200 with the CSRF token (also in the XSRF-TOKEN cookie) and the session's expiry; 401 for a bad key. */
  @Post('login')
  @HttpCode(200)
  async login(@Body() body: unknown, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<LoginView> {
    const apiKey = isObject(body) ? body.apiKey : undefined;
    if (typeof apiKey !== 'string') throw new ValidationError('MISSING_FIELD', 'apiKey', 'send {"apiKey": "kairos_..."}');
    const key = await this.authenticator.keyOf(apiKey);
    if (!key) throw new AccessError('UNAUTHORIZED', 'this API key is unknown or revoked');
    const token = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(32).toString('base64url');
    const ttlMs = this.config.api.sessionTtlMs;
    const expiresAt = await this.sessions.create(this.db, { tokenHash: hashSecret(token), csrfHash: hashSecret(csrfToken), apiKeyId: key.id, ttlMs });
    res.setHeader('set-cookie', sessionCookies(token, csrfToken, ttlMs, req.secure));
    return { csrfToken, expiresAt: expiresAt.toISOString(), scopes: key.scopes };
  }

  /** 204; the session's cookies are cleared and it no longer authenticates anything. */
  @Post('logout')
  @HttpCode(204)
  async logout(@Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<void> {
    const token = cookieValue(req.headers, SESSION_COOKIE);
    if (token) {
      await this.sessions.delete(this.db, hashSecret(token));
      this.authenticator.forgetSession(token);
    }
    res.setHeader('set-cookie', clearedSessionCookies(req.secure));
  }
}

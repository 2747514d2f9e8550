/**
 * Serves the dashboard built by `npm run build` (dist/ui) at /ui: hashed assets under /ui/assets
 * with year-long caching, and index.html for /ui and every deep link under it, so the page's own
 * router takes over. Every answer carries a CSP that allows only the page's own scripts and
 * styles, and refuses framing.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Controller, Get, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { PublicRoute } from '@kairos/process';

export const UI_SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** Compiled, this file sits in dist/apps/api/src/ui next to dist/ui; run from source (tests), the build is in dist/ui at the root. */
const UI_DIRS = [fileURLToPath(new URL('../../../../ui', import.meta.url)), fileURLToPath(new URL('../../../../dist/ui', import.meta.url))];

export function builtUiDir(): string | null {
  return UI_DIRS.find((dir) => existsSync(join(dir, 'index.html'))) ?? null;
}

@Controller('ui')
@PublicRoute()
export class UiAssetsController {
  @Get('assets/:file')
  asset(@Param('file') file: string, @Res() res: Response): void {
    const dir = builtUiDir();
    const type = CONTENT_TYPES[file.slice(file.lastIndexOf('.'))];
    res.set(UI_SECURITY_HEADERS);
    if (dir === null || type === undefined || !/^[\w.-]+$/.test(file) || !existsSync(join(dir, 'assets', file))) {
      res.status(404).json({ code: 'NOT_FOUND', message: `no dashboard asset ${file}`, field: null });
      return;
    }
    // Asset names carry a content hash: a changed file gets a new name, so caching forever is safe.
    res.set({ 'content-type': type, 'cache-control': 'public, max-age=31536000, immutable' });
    res.sendFile(join(dir, 'assets', file));
  }

  @Get()
  root(@Res() res: Response): void {
    this.page(res);
  }

  @Get('*path')
  deepLink(@Res() res: Response): void {
    this.page(res);
  }

  private page(res: Response): void {
    const dir = builtUiDir();
    res.set(UI_SECURITY_HEADERS);
    if (dir === null) {
      res.status(503).json({ code: 'UI_NOT_BUILT', message: 'the dashboard is not built: run npm run build', field: null });
      return;
    }
    res.set({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' });
    res.sendFile(join(dir, 'index.html'));
  }
}

/** REST for the namespace's signing secret: GET (write scope) and POST rotate (admin). */
import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import { RequiresScope } from '../auth/caller.guard.js';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { SigningSecretService } from './signing-secret.service.js';

@Controller('v1/signing-secret')
export class SigningSecretController {
  constructor(private readonly secrets: SigningSecretService) {}

  @Get()
  @RequiresScope('write')
  show(@Caller() caller: CallerContext) {
    return this.secrets.show(caller);
  }

  @Post('rotate')
  @HttpCode(200)
  @RequiresScope('admin')
  rotate(@Caller() caller: CallerContext) {
    return this.secrets.rotate(caller);
  }
}

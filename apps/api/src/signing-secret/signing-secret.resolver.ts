/** GraphQL for the namespace's signing secret, scoped as REST: the query needs write, the rotation admin. */
import { Field, Mutation, ObjectType, Query, Resolver } from '@nestjs/graphql';
import { RequiresScope } from '../auth/caller.guard.js';
import { Caller, type CallerContext } from '../auth/request-context.js';
import { SigningSecretService } from './signing-secret.service.js';

@ObjectType('SigningSecret')
export class SigningSecretType {
  @Field(() => String) secret!: string;
}

@ObjectType('RotatedSigningSecret')
export class RotatedSigningSecretType {
  @Field(() => String) secret!: string;
  @Field(() => String, { description: 'Until this instant deliveries also carry a v1 signature made with the previous secret.' })
  previousValidUntil!: string;
}

@Resolver()
export class SigningSecretResolver {
  constructor(private readonly secrets: SigningSecretService) {}

  @Query(() => SigningSecretType, { description: 'GET /v1/signing-secret (write scope): the secret Kairos-Signature is made with.' })
  @RequiresScope('write')
  signingSecret(@Caller() caller: CallerContext) {
    return this.secrets.show(caller);
  }

  @Mutation(() => RotatedSigningSecretType, { description: 'POST /v1/signing-secret/rotate (admin): a new secret; the previous one keeps signing during the grace window.' })
  @RequiresScope('admin')
  rotateSigningSecret(@Caller() caller: CallerContext) {
    return this.secrets.rotate(caller);
  }
}

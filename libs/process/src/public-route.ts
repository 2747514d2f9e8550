/** Routes every orchestrator and scraper may call without an API key: health checks and metrics. */
import { SetMetadata } from '@nestjs/common';

export const PUBLIC_ROUTE = 'kairos:public-route';

export const PublicRoute = (): ClassDecorator & MethodDecorator => SetMetadata(PUBLIC_ROUTE, true);

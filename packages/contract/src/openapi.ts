/**
 * The OpenAPI documents of both services, apart from the contract's index: a
 * service builds one only when `/openapi.json` is first asked for, so the
 * generator (zod-to-openapi) and the route registrations load then, not at
 * every worker's start (~0.4 MB of heap and ~1 MB resident each, issue 46).
 */
export { buildGatewayOpenApi } from './openapi-gateway';
export { buildPaymentOpenApi } from './openapi-payment';
export type { BuildOpenApiOptions } from './openapi-shared';

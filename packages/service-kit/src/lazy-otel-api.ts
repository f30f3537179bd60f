import { installLazyOtelApi } from './otel-api';

// Imported first by the services' main.ts (see otel-api.ts).
installLazyOtelApi();

// Jest globalTeardown: stops what global-setup.ts started and removes its temp directory.
import { TEST_SERVICES, type TestServices } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const services = (globalThis as Record<symbol, TestServices | undefined>)[TEST_SERVICES];
  delete (globalThis as Record<symbol, TestServices | undefined>)[TEST_SERVICES];
  await services?.stop();
}

// The RelayError a use case's call was refused with (failing the test when it was not refused, or not with one).
import { RelayError } from '../../relay-core/domain/errors';

export async function refusal(call: Promise<unknown>): Promise<RelayError> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RelayError);
  return error as RelayError;
}

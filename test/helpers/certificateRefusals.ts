/**
 * The refusal code the app must record for each faulty bundle the emulator makes:
 * one table for the unit, integration and end-to-end tests.
 */
import type { BundleFault } from '../../tools/emulator/certificateBundle';

export const refusalOfFault: Record<BundleFault, string> = {
  'wrong-password': 'PfxPasswordInvalid',
  'without-key': 'PfxWithoutKey',
  'wrong-thumbprint': 'ThumbprintMismatch',
  'mismatched-cer': 'CerMismatch',
  'unreadable-cer': 'CerUnreadable',
  expired: 'CertificateExpired',
  'not-yet-valid': 'CertificateNotYetValid',
};

/** Each fault with its code, in the table's order. */
export const faultRefusals = Object.entries(refusalOfFault) as [BundleFault, string][];

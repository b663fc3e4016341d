/** Transaction tokens: the public surface of src/tokens. */
export type { TransactionClaims } from './claims.js';
export {
  billImageRetrieval,
  checkAllowance,
  type ImageryAccounts,
  type ImageryRequest,
  POINT_TOLERANCE_DEGREES,
  tokenArea,
  type VerifiedImageryAccess,
  verifyImageryRequest,
} from './imagery-access.js';
export {
  generateTokenSecret,
  parseTokenKeyring,
  rotateTokenKeyringConfig,
  TOKEN_SECRET_BYTES,
  type TokenKeyring,
} from './keyring.js';
export {
  type IssuedToken,
  TOKEN_FORMAT_PREFIX,
  TOKEN_VALIDITY_MS,
  TokenCodec,
  type TokenCodecOptions,
  type TokenRejection,
  type TokenSubject,
} from './token-codec.js';

// The QR code of an otpauth URI as SVG, for admin-totp-enrol: drawn by uqr (unjs/uqr on npm: MIT,
// no dependencies, one ES module that runs under Deno and Node alike and renders SVG itself).
import { renderSVG } from 'uqr';

/** An SVG of the QR code of `text` (error correction M, 4-module quiet zone). */
export const qrSvg = (text: string): string => renderSVG(text, { ecc: 'M', border: 4, pixelSize: 6 });

/**
 * The product's mark: a signed envelope on its way (an arrow through a square), drawn with
 * shapes only, so it needs no file and no inline style.
 */
export function Logo() {
  return (
    <svg class="logo" viewBox="0 0 32 32" aria-hidden="true" focusable="false">
      <rect x="2" y="2" width="28" height="28" rx="7" class="logo-back" />
      <path d="M8 11 L16 17 L24 11" class="logo-line" />
      <rect x="8" y="10" width="16" height="12" rx="2" class="logo-line" />
      <path d="M20 25 L26 25 M23.5 22.5 L26 25 L23.5 27.5" class="logo-line" />
    </svg>
  );
}

export function ErrorBox(
  { error, retry }: { error: string; retry?: () => void },
) {
  return (
    <div className="error-box" role="alert">
      <p>{error}</p>
      {retry && <button type="button" onClick={retry}>Try again</button>}
    </div>
  );
}

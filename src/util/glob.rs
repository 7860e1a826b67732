/// Redis's `stringmatchlen`: `*`, `?`, `[abc]`, `[^a-c]`, `\x` escapes.
pub fn glob_match(pattern: &[u8], text: &[u8], nocase: bool) -> bool {
    let _ = (pattern, text, nocase);
    todo!()
}

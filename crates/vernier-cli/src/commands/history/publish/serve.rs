//! `vernier history serve DIR`: the published site over HTTP on 127.0.0.1 only, for a look
//! before it goes to a static host. GET and HEAD of the files under DIR; nothing else.

use anyhow::{Context as _, Result};
use clap::Args;
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};

#[derive(Args, Clone, Debug)]
pub struct ServeArgs {
    /// The site's directory (written by `vernier history publish DIR`).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The port on 127.0.0.1 (0: any free one, said when it starts).
    #[arg(long, value_name = "N", default_value_t = 8080)]
    pub port: u16,
}

pub fn serve_command(a: &ServeArgs) -> Result<i32> {
    if !a.dir.join("index.html").is_file() {
        anyhow::bail!(
            "{} holds no site (no index.html): write one first with `vernier history publish {}`",
            a.dir.display(),
            a.dir.display()
        );
    }
    let listener = TcpListener::bind(("127.0.0.1", a.port)).with_context(|| {
        format!(
            "cannot listen on 127.0.0.1:{} (another server there? --port N picks another, 0 any \
             free one)",
            a.port
        )
    })?;
    let port = listener.local_addr()?.port();
    println!(
        "serving {} at http://127.0.0.1:{port}/ (Ctrl-C stops)",
        a.dir.display()
    );
    let _ = std::io::stdout().flush();
    for stream in listener.incoming().flatten() {
        // One bad request (or a client gone) ends that connection only.
        let _ = answer(stream, &a.dir);
    }
    Ok(0)
}

/// The file `target` names under `dir`, or `None` when it would leave it.
fn resolve(dir: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next().unwrap_or("");
    let decoded = percent_decode(path)?;
    let mut out = dir.to_path_buf();
    for c in Path::new(decoded.trim_start_matches('/')).components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if out.is_dir() {
        out.push("index.html");
    }
    Some(out)
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn content_type(p: &Path) -> &'static str {
    match p.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

fn answer(stream: TcpStream, dir: &Path) -> std::io::Result<()> {
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    // The headers are read and not used.
    let mut header = String::new();
    while reader.read_line(&mut header)? > 2 {
        header.clear();
    }
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    let mut out = stream;
    if method != "GET" && method != "HEAD" {
        return reply(
            &mut out,
            "405 Method Not Allowed",
            "text/plain",
            b"GET only\n",
            true,
        );
    }
    let file = resolve(dir, target).and_then(|p| Some((std::fs::read(&p).ok()?, p)));
    match file {
        Some((body, p)) => reply(&mut out, "200 OK", content_type(&p), &body, method == "GET"),
        None => reply(
            &mut out,
            "404 Not Found",
            "text/plain",
            b"not found\n",
            true,
        ),
    }
}

fn reply(
    out: &mut TcpStream,
    status: &str,
    ty: &str,
    body: &[u8],
    with_body: bool,
) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {ty}\r\nContent-Length: {}\r\nConnection: close\r\n\
         X-Content-Type-Options: nosniff\r\n\r\n",
        body.len()
    )?;
    if with_body {
        out.write_all(body)?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_site() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("s")).unwrap();
        assert_eq!(
            resolve(d.path(), "/s/a%20b.html?x=1"),
            Some(d.path().join("s/a b.html"))
        );
        assert_eq!(resolve(d.path(), "/"), Some(d.path().join("index.html")));
        assert_eq!(resolve(d.path(), "/../etc/passwd"), None);
        assert_eq!(resolve(d.path(), "/s/%2e%2e/%2e%2e/x"), None);
    }
}

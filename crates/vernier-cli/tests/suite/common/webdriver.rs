//! A real browser driven through WebDriver: Debian's `chromedriver` with its `chromium`,
//! headless, spoken to over HTTP with the standard library (the few commands the site's tests
//! need: open a page, run a script, find and click an element, type, move the pointer, take a
//! screenshot, read the console).

use serde_json::{json, Value};
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The key WebDriver names an element by.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

pub struct Browser {
    port: u16,
    session: String,
    driver: Child,
}

/// One HTTP request to the driver; its JSON answer.
fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> Value {
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("chromedriver");
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // The driver may keep the connection open: read the head, then Content-Length bytes.
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    let head_end = loop {
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "{method} {path}: connection closed");
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).to_ascii_lowercase();
    let chunked = head.contains("transfer-encoding: chunked");
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    loop {
        let have = raw.len() - head_end;
        let done = match length {
            Some(n) => have >= n,
            None if chunked => raw.ends_with(b"0\r\n\r\n"),
            None => false,
        };
        if done {
            break;
        }
        let n = s.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&raw[head_end..]).into_owned();
    let rest = if chunked {
        dechunk(&text)
    } else {
        text.clone()
    };
    serde_json::from_str(&rest).unwrap_or_else(|e| panic!("{method} {path}: {e}: {text}"))
}

fn dechunk(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&after[..n]);
        rest = &after[n + 2..];
    }
    out
}

/// Base64 (standard alphabet) to bytes.
fn base64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let clean: Vec<u8> = s
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
        .collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= u32::from(val(c)) << (18 - 6 * i);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len() - 1]);
    }
    out
}

impl Browser {
    /// A headless Chromium of `width` × `height`, or `None` without chromedriver.
    pub fn start(width: u32, height: u32) -> Option<Browser> {
        let port = super::pgserver::free_port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "chromedriver did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                format!("--window-size={width},{height}")]}}}});
        let v = http(port, "POST", "/session", Some(&caps));
        let session = v["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {v}"))
            .to_string();
        Some(Browser {
            port,
            session,
            driver,
        })
    }

    fn call(&self, method: &str, what: &str, body: Option<Value>) -> Value {
        let v = http(
            self.port,
            method,
            &format!("/session/{}{what}", self.session),
            body.as_ref(),
        );
        if let Some(e) = v["value"].get("error") {
            panic!("{method} {what}: {e}: {}", v["value"]["message"]);
        }
        v["value"].clone()
    }

    pub fn open(&self, url: &str) {
        self.call("POST", "/url", Some(json!({ "url": url })));
    }

    /// Run `script` (a function body; `return` gives its value) in the page.
    pub fn run(&self, script: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
    }

    fn element(&self, css: &str) -> String {
        let v = self.call(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        );
        v[ELEMENT]
            .as_str()
            .or(v["ELEMENT"].as_str())
            .unwrap_or_else(|| panic!("no element {css}: {v}"))
            .to_string()
    }

    pub fn click(&self, css: &str) {
        let id = self.element(css);
        self.call("POST", &format!("/element/{id}/click"), Some(json!({})));
    }

    pub fn type_into(&self, css: &str, text: &str) {
        let id = self.element(css);
        self.call(
            "POST",
            &format!("/element/{id}/value"),
            Some(json!({ "text": text })),
        );
    }

    /// Move the pointer onto the element's centre.
    pub fn hover(&self, css: &str) {
        let id = self.element(css);
        let origin = json!({ ELEMENT: id });
        self.call(
            "POST",
            "/actions",
            Some(json!({"actions": [{"type": "pointer", "id": "mouse",
                "parameters": {"pointerType": "mouse"},
                "actions": [{"type": "pointerMove", "duration": 0, "origin": origin,
                             "x": 0, "y": 0}]}]})),
        );
    }

    /// A screenshot of the window, as PNG bytes.
    pub fn screenshot(&self) -> Vec<u8> {
        base64(self.call("GET", "/screenshot", None).as_str().unwrap())
    }

    /// The console's messages of level SEVERE (errors) since the last call.
    pub fn console_errors(&self) -> Vec<String> {
        let v = self.call("POST", "/se/log", Some(json!({"type": "browser"})));
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter(|e| e["level"] == "SEVERE")
                    .map(|e| e["message"].to_string())
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = http(
            self.port,
            "DELETE",
            &format!("/session/{}", self.session),
            None,
        );
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

#[test]
fn base64_decodes() {
    assert_eq!(base64("aGVsbG8="), b"hello");
    assert_eq!(base64("aGk="), b"hi");
}

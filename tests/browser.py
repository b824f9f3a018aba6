"""Render orchlog's HTML pages in headless Chromium (Debian's `chromium`, installed by scripts/bootstrap.sh).

`render` loads a copy of the page with two small scripts added, one first
in <head> that records every uncaught error and console.error, one last in
<body> that measures the elements asked for after the page's own script has
run; Chromium's --dump-dom prints the resulting DOM, where the measurements
wait in a <pre>. The screenshot is taken of the page as written.

`download` clicks a button of a copy of the page, once the page's own script
has run, in a Chromium whose profile saves downloads to a directory without
asking, and returns the files saved there.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (scripts/bootstrap.sh installs Debian's chromium)"
)

_ERRORS = """<script>window.__errors=[];
addEventListener("error",function(e){__errors.push(String(e.message||e));});
(function(){var log=console.error;console.error=function(){__errors.push(Array.prototype.join.call(arguments," "));
log.apply(console,arguments);};})();</script>"""

_PROBE = """<script>(function(){
var want=%s,out={errors:window.__errors,width:innerWidth,height:innerHeight,
scroll_width:document.documentElement.scrollWidth,elements:{}};
want.forEach(function(sel){var e=document.querySelector(sel);if(!e){out.elements[sel]=null;return;}
var r=e.getBoundingClientRect(),s=getComputedStyle(e);out.elements[sel]={top:r.top,left:r.left,bottom:r.bottom,
right:r.right,width:r.width,height:r.height,shown:s.display!=="none"&&s.visibility!=="hidden",
drawn:e.getAttribute("data-drawn")};});
var p=document.createElement("pre");p.id="orchlog-probe";p.textContent=JSON.stringify(out);document.body.appendChild(p);
})();</script>"""


def _chromium(*args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def render(page: Path, size: tuple[int, int], selectors: list[str], shot: Path) -> dict:
    """Measurements of `selectors` (and the errors the page logged) at window size `size`; a PNG at `shot`."""
    html = page.read_text(encoding="utf-8")
    probed = page.with_name(page.stem + ".probe.html")
    probed.write_text(
        html.replace("<head>", "<head>" + _ERRORS, 1).replace("</body>", _PROBE % json.dumps(selectors) + "</body>", 1),
        encoding="utf-8",
    )
    window = f"--window-size={size[0]},{size[1]}"
    dom = _chromium(window, "--virtual-time-budget=5000", "--dump-dom", probed.as_uri())
    found = re.search(r'<pre id="orchlog-probe">(.*?)</pre>', dom.stdout, re.S)
    assert found, f"no measurements in the dumped DOM (chromium said: {dom.stderr[-2000:]})"
    shot_run = _chromium(window, f"--screenshot={shot}", page.as_uri())
    assert shot.is_file(), shot_run.stderr[-2000:]
    text = found.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    return json.loads(text)


def download(page: Path, selector: str, work: Path) -> dict[str, bytes]:
    """The files saved when the element `selector` of `page` is clicked (name -> bytes)."""
    saved, profile = work / "downloads", work / "profile"
    (profile / "Default").mkdir(parents=True)
    saved.mkdir()
    prefs = {"download": {"default_directory": str(saved), "prompt_for_download": False}}
    (profile / "Default" / "Preferences").write_text(json.dumps(prefs), encoding="utf-8")
    clicking = page.with_name(page.stem + ".click.html")
    click = f"<script>document.querySelector({json.dumps(selector)}).click();</script>"
    clicking.write_text(page.read_text(encoding="utf-8").replace("</body>", click + "</body>", 1), encoding="utf-8")
    # Chromium saves the file, then may stay up with the download shelf: the file is awaited, then the browser
    # is ended.
    assert CHROMIUM is not None
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={profile}"]
    browser = subprocess.Popen([*cmd, clicking.as_uri()], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60

    def done() -> list[Path]:
        """The saved files, once no download is in flight (Chromium writes to a hidden or .crdownload file
        first, then renames it)."""
        names = list(saved.iterdir())
        if any(f.name.startswith(".") or f.name.endswith(".crdownload") for f in names):
            return []
        return names

    try:
        while time.monotonic() < deadline and browser.poll() is None and not done():
            time.sleep(0.1)
    finally:
        browser.kill()
        _, err = browser.communicate()
    files = {f.name: f.read_bytes() for f in done()}
    assert files, f"nothing was saved (chromium said: {err.decode(errors='replace')[-2000:]})"
    return files


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height

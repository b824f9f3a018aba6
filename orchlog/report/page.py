"""The shell of orchlog's HTML pages (compare and guardrail): one file, inline CSS and script, nothing fetched.

The page reads without its script (tables and SVG charts are in the HTML);
the script adds what needs the window: the heatmaps, drawn on a canvas from
numbers embedded as JSON and binned to the width at hand (labels thinned,
re-drawn on resize), sortable tables, and CSV export of a table.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from orchlog import __version__

CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:0;color:#222;padding:.6em 1.2em;max-width:100%}
main{max-width:1800px;margin:0 auto}
h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.15em;margin:1.2em 0 .4em}h3{font-size:1em}
h1 .badge{font-size:.7em;padding:.15em .6em;border-radius:.4em;color:#fff;vertical-align:middle}
.ok,.PASS_GUARDRAIL,.PASS_GUARDRAIL_LOCAL,.EXPECTED_DRIFT_ONLY,.PASS_EQUIV,.EXPECTED_DRIFT{background:#2e7d32}
.diverged,.FAIL_GUARDRAIL,.FAIL_EQUIV,.PAIRING_ERROR{background:#d32f2f}.no_match,.tokens_differ{background:#757575}
.undecided{background:#7e57c2}.incomplete,.INCOMPLETE{background:#ef6c00}.warn{color:#b71c1c;font-weight:bold}
.verdict{color:#fff;padding:0 .4em;border-radius:.3em}
table{border-collapse:collapse;margin:.5em 0;max-width:100%}td,th{border:1px solid #ddd;padding:.2em .6em;text-align:left}
th.sort{cursor:pointer;user-select:none}th.sort:after{content:" \\2195";color:#aaa}
td.num{text-align:right;font-variant-numeric:tabular-nums}code{background:#f4f4f4;padding:0 .2em;word-break:break-all}
.tier{display:inline-block;width:.8em;height:.8em;border-radius:.2em;margin-right:.3em;vertical-align:baseline}
figure{margin:.6em 0}figcaption{color:#555;font-size:.9em}
svg.chart{width:100%;height:auto;max-width:var(--w,900px);display:block}
.scroll{overflow-x:auto;max-height:32em;overflow-y:auto}
.heat{position:relative;width:100%}.heat canvas{display:block;width:100%}
.heat-mark{position:absolute;border:2px solid #000;box-shadow:0 0 0 2px #fff;pointer-events:none}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,480px),1fr));gap:0 1.5em}
.summary p{margin:.25em 0}button{font:inherit;margin:.3em 0}
footer{color:#777;font-size:.85em;margin-top:2em}
"""

# Severity (the graded error over its rule's threshold) to colour: below 1 from pale green to yellow,
# from 1 (the threshold) up from orange to dark red; logarithmic from 1e-4 to 1e4.
JS = r"""
(function(){
"use strict";
var LO=-4,HI=4;
var BELOW=[[237,248,233],[199,233,192],[161,217,155],[116,196,118],[255,237,160]];
var ABOVE=[[253,174,97],[244,109,67],[215,48,39],[165,0,38],[90,0,20]];
function mix(stops,t){t=Math.min(Math.max(t,0),1)*(stops.length-1);var i=Math.min(Math.floor(t),stops.length-2),f=t-i;
 var a=stops[i],b=stops[i+1];return "rgb("+[0,1,2].map(function(k){return Math.round(a[k]+(b[k]-a[k])*f)}).join(",")+")";}
var UNDECIDED="rgb(149,117,205)";
function shade(s,state){if(state===1)return UNDECIDED;if(state===2)return colour(Math.max(s,1));
 if(state===0&&s>=1)s=0.999;return colour(s);}
function colour(s){if(s===null||isNaN(s))return null;if(s<=0)return "rgb(247,252,245)";if(!isFinite(s))return "rgb(40,0,10)";
 var l=Math.log(s)/Math.LN10;if(l<0)return mix(BELOW,(l-LO)/(-LO));return mix(ABOVE,l/HI);}
function fmt(v){if(v===null||v===undefined||isNaN(v))return "-";if(!isFinite(v)||v>=1e300)return v>0?"inf":"-inf";return Number(v).toPrecision(3);}
function drawHeat(box){
 var d=JSON.parse(document.getElementById(box.getAttribute("data-source")).textContent);
 var nr=d.labels.length,nc=d.first.length;if(!nr||!nc)return;
 var W=box.clientWidth||600,labelW=Math.min(170,Math.max(70,W*0.18)),top=44,bottom=46,plotW=Math.max(40,W-labelW-8);
 var cf=Math.max(1,Math.ceil(nc/Math.floor(plotW/3))),cols=Math.ceil(nc/cf),cw=plotW/cols;
 var maxH=Math.max(120,Math.min(window.innerHeight*0.42,460)-top-bottom);
 var rf=Math.max(1,Math.ceil(nr*3/maxH)),rows=Math.ceil(nr/rf),rh=Math.max(3,Math.min(16,Math.floor(maxH/rows)));
 var H=top+rows*rh+bottom,dpr=window.devicePixelRatio||1;
 var c=box.querySelector("canvas");if(!c){c=document.createElement("canvas");box.appendChild(c);}
 c.width=Math.round(W*dpr);c.height=Math.round(H*dpr);c.style.height=H+"px";
 var g=c.getContext("2d");g.setTransform(dpr,0,0,dpr,0,0);g.clearRect(0,0,W,H);g.font="11px sans-serif";
 var sev=[],abs=[],st=[];
 for(var r=0;r<rows;r++){for(var k=0;k<cols;k++){var s=null,a=null,t=-1;
  for(var rr=r*rf;rr<Math.min(nr,(r+1)*rf);rr++)for(var kk=k*cf;kk<Math.min(nc,(k+1)*cf);kk++){var i=rr*nc+kk,v=d.sev[i];
   if(v!==null&&(s===null||v>s))s=v;var x=d.abs[i];if(x!==null&&(a===null||x>a))a=x;if(d.state[i]>t)t=d.state[i];}
  sev.push(s);abs.push(a);st.push(t);var col=t<0?null:shade(s===null?0:s,t);
  if(col){g.fillStyle=col;g.fillRect(labelW+k*cw,top+r*rh,Math.ceil(cw),rh);}}}
 g.fillStyle="#333";g.textAlign="right";var rstep=Math.max(1,Math.ceil(12/rh));
 function rowName(r){var a=d.labels[r*rf],b=d.labels[Math.min(nr,(r+1)*rf)-1];return rf>1&&a!==b?a+" \u2026 "+b:a;}
 for(r=0;r<rows;r+=rstep)g.fillText(rowName(r).slice(0,28),labelW-4,top+r*rh+Math.min(rh,12)-1);
 g.fillStyle="#666";g.textAlign="left";var cstep=Math.max(1,Math.ceil(64/cw));
 function colName(k){var a=d.first[k*cf],b=d.last[Math.min(nc,(k+1)*cf)-1];return a<0?"-":(a===b?""+a:a+"-"+b);}
 for(k=0;k<cols;k+=cstep)g.fillText(colName(k),labelW+k*cw,top-4);
 g.fillStyle="#222";g.font="bold 12px sans-serif";g.fillText(d.title,labelW,13);g.font="11px sans-serif";
 if(d.decode!==null&&d.decode!==undefined){var x=labelW+Math.floor(d.decode/cf)*cw;g.strokeStyle="#1565c0";g.setLineDash([4,3]);
  g.beginPath();g.moveTo(x,18);g.lineTo(x,top+rows*rh);g.stroke();g.setLineDash([]);g.fillStyle="#1565c0";
  g.textAlign="right";g.fillText("prefill",x-3,27);g.textAlign="left";g.fillText("decode",x+3,27);}
 var ly=top+rows*rh+10,lw=Math.min(320,plotW);
 for(var j=0;j<lw;j++){g.fillStyle=colour(Math.pow(10,LO+(HI-LO)*j/lw));g.fillRect(labelW+j,ly,1.5,10);}
 g.fillStyle="#555";[-4,-2,0,2,4].forEach(function(e){var x=labelW+lw*(e-LO)/(HI-LO);g.fillRect(x,ly+10,1,4);
  g.textAlign="center";g.fillText(e===0?"threshold":"1e"+e,x,ly+24);});
 g.textAlign="left";g.fillText("error / threshold of its rule (log scale)",labelW+lw+10,ly+9);
 g.fillStyle=UNDECIDED;g.fillRect(labelW+lw+10,ly+16,10,10);g.fillStyle="#555";
 g.fillText("undecided: not proven either way (never a pass)",labelW+lw+24,ly+25);
 var old=box.querySelector(".heat-mark");if(old)old.remove();
 if(d.mark){var mr=Math.floor(d.mark[0]/rf),mc=Math.floor(d.mark[1]/cf),m=document.createElement("div");m.className="heat-mark";
  var mw=Math.max(cw,8),mh=Math.max(rh,8);m.style.left=(labelW+mc*cw+cw/2-mw/2-1)+"px";m.style.top=(top+mr*rh+rh/2-mh/2-1)+"px";
  m.style.width=(mw+2)+"px";m.style.height=(mh+2)+"px";m.title="first divergence";box.appendChild(m);}
 c.onmousemove=function(e){var b=c.getBoundingClientRect(),x=e.clientX-b.left-labelW,y=e.clientY-b.top-top;
  var k=Math.floor(x/cw),r=Math.floor(y/rh);if(k<0||r<0||k>=cols||r>=rows){c.title="";return;}
  var i=r*cols+k,what=["","undecided; ","fails; "][st[i]]||"";
  c.title=rowName(r)+", token "+colName(k)+": "+what+"error/threshold "+fmt(sev[i])+", max_abs "+fmt(abs[i]);};
 box.setAttribute("data-drawn",cols+"x"+rows);
}
function drawAll(){var boxes=document.querySelectorAll(".heat[data-source]");for(var i=0;i<boxes.length;i++)drawHeat(boxes[i]);}
function cellValue(td){var v=td.getAttribute("data-v");if(v===null)v=td.textContent;var n=parseFloat(v);
 return isNaN(n)?v.toLowerCase():n;}
function sortable(t){var ths=t.querySelectorAll("th");for(var i=0;i<ths.length;i++)(function(i,th){th.className+=" sort";
 th.onclick=function(){var body=t.tBodies[0],rs=Array.prototype.slice.call(body.rows),dir=th.getAttribute("data-dir")==="asc"?-1:1;
  rs.sort(function(a,b){var x=cellValue(a.cells[i]),y=cellValue(b.cells[i]);
   if(typeof x!==typeof y){x=String(x);y=String(y);}return x<y?-dir:x>y?dir:0;});
  th.setAttribute("data-dir",dir>0?"asc":"desc");rs.forEach(function(r){body.appendChild(r);});};})(i,ths[i]);}
function csvCell(v){if(/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(v))return v;
 if(/^[=+\-@\t\r\n]/.test(v))v="'"+v;return '"'+v.replace(/"/g,'""')+'"';}
function csv(t){return Array.prototype.map.call(t.rows,function(r){return Array.prototype.map.call(r.cells,function(c){
 var v=c.getAttribute("data-v");if(v===null)v=c.textContent;return csvCell(v);}).join(",");}).join("\n")+"\n";}
function exporter(b){b.onclick=function(){var t=document.getElementById(b.getAttribute("data-table"));
 var url=URL.createObjectURL(new Blob([csv(t)],{type:"text/csv"})),a=document.createElement("a");a.href=url;
 a.download=b.getAttribute("data-file")||"table.csv";document.body.appendChild(a);a.click();a.remove();
 setTimeout(function(){URL.revokeObjectURL(url);},1000);};}
var ts=document.querySelectorAll("table.sortable");for(var i=0;i<ts.length;i++)sortable(ts[i]);
var bs=document.querySelectorAll("button.csv");for(i=0;i<bs.length;i++){bs[i].hidden=false;exporter(bs[i]);}
drawAll();var pending=null;
window.addEventListener("resize",function(){clearTimeout(pending);pending=setTimeout(drawAll,80);});
})();
"""


def json_script(element_id: str, data: Any) -> str:
    """Data for the script, as a JSON block the browser does not run; `<`, `>` and `&` are written as JSON
    escapes, so no name from a trace can close the block or open a tag."""
    text = json.dumps(data, allow_nan=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{escape(element_id)}">{text}</script>'


def csv_button(table_id: str, file_name: str) -> str:
    """A button (shown by the script) that saves the table as CSV."""
    return (
        f'<button class="csv" hidden data-table="{escape(table_id)}" data-file="{escape(file_name)}">'
        "Save as CSV</button>"
    )


def page(title: str, body: list[str]) -> str:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>\n"
        + "\n".join(body)
        + f"\n<footer><p>orchlog {escape(__version__)}</p></footer></main>\n<script>{JS}</script>\n</body></html>\n"
    )

#!/bin/sh
# Re-make tests/fixtures/glyphs/ligatures-{t1,ot1,t1-bare}.pdf from ligatures.tex: TeX text set in
# Type 3 bitmap fonts (PK, made by mktexpk from the Computer Modern / EC Metafont sources)
# that carry no Unicode map, as dvips did before 2016 and as many 1990s-2010s arXiv PDFs are.
#
# Needs Debian's texlive-latex-base, texlive-fonts-recommended, ghostscript and qpdf.
# Why each step:
#   dvips -Ppk -bitmapfontenc off   bitmap fonts without glyph names (dvips >= 2016 adds them)
#   ps2pdf                          ghostscript 10 then invents a ToUnicode map (wrong: it maps
#                                   "c" to a carriage return), so:
#   qpdf --qdf + fix-qdf            the ToUnicode references are cut out, leaving the fonts with
#                                   no Unicode map at all, which is what older PDFs have.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)/tests/fixtures/glyphs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/ligatures.tex" "$work/"
cd "$work"
for enc in t1 ot1 t1-bare; do
    case $enc in  # OT1 instead of T1; T1 without the typewriter line (no evidence inside)
        ot1) pre='\def\useotone{}' ;;
        t1-bare) pre='\def\nokeywords{}' ;;
        *) pre='' ;;
    esac
    latex -interaction=batchmode -jobname="ligatures-$enc" "$pre\\input{ligatures.tex}" >/dev/null
    dvips -q -Ppk -bitmapfontenc off -o "$enc.ps" "ligatures-$enc.dvi"
    ps2pdf "$enc.ps" "$enc.gs.pdf"
    qpdf --qdf --object-streams=disable "$enc.gs.pdf" "$enc.qdf"
    sed -e 's|/ToUnicode [0-9]* 0 R||' "$enc.qdf" > "$enc.cut.qdf"
    fix-qdf < "$enc.cut.qdf" > "$enc.fixed.qdf"
    qpdf --compress-streams=y --object-streams=generate --deterministic-id \
        "$enc.fixed.qdf" "$here/ligatures-$enc.pdf"
done
pdffonts "$here/ligatures-t1.pdf"

"""Writes form_filled.pdf (python tests/data/make_form.py): form_dd0293.pdf with its first
text fields filled in (pypdf writes their appearance streams) and one FreeText annotation
on page 2. The source form is a US government form (public domain), see README.md.
"""

from __future__ import annotations

from pathlib import Path

from pypdf import PdfReader, PdfWriter
from pypdf.annotations import FreeText

HERE = Path(__file__).resolve().parent

VALUES = {
    "form1[0].page1[0].TextField1[0]": "CASE-2024-0193",
    "form1[0].page1[0].DateField2[0]": "20190315",
    "form1[0].page1[0].Subform1[0].TextField1[0]": "Okonkwo",
    "form1[0].page1[0].Subform1[0].TextField1[1]": "Adaeze",
    "form1[0].page1[0].TextField1[3]": "1742 Larchmont Avenue",
    "form1[0].page1[0].TextField1[4]": "Duluth, MN, USA",
    "form1[0].page1[0].TextField1[5]": "55803",
    "form1[0].page1[0].TextField1[6]": "a.okonkwo@example.org",
}
NOTE = "Reviewer note: discharge date confirmed with the records office."


def main() -> None:
    reader = PdfReader(HERE / "form_dd0293.pdf")
    if reader.is_encrypted:
        reader.decrypt("")
    writer = PdfWriter(clone_from=reader)
    acro = writer._root_object["/AcroForm"]
    if "/XFA" in acro:
        del acro["/XFA"]  # the AcroForm fields are what viewers without XFA show
    for page in writer.pages[:1]:
        writer.update_page_form_field_values(page, VALUES, auto_regenerate=False)
    note = FreeText(
        text=NOTE,
        rect=(60, 700, 560, 730),
        font="Helvetica",
        font_size="10pt",
        font_color="000000",
        border_color="000000",
        background_color="ffffff",
    )
    writer.add_annotation(page_number=1, annotation=note)
    with open(HERE / "form_filled.pdf", "wb") as f:
        writer.write(f)


if __name__ == "__main__":
    main()

/*
 * report_html.S - embeds lib/export/report.html (the HTML report's page)
 * in the tools at build time, NUL-terminated, as export_report_html: the
 * page stays a file one can read and edit as HTML.  The path is relative
 * to the top directory, where make runs the assembler.
 */
	.section .rodata
	.globl export_report_html
	.type export_report_html, @object
export_report_html:
	.incbin "lib/export/report.html"
	.byte 0
	.size export_report_html, . - export_report_html
	.section .note.GNU-stack, "", @progbits

// Sortable tables: a click on a column's name sorts by it, again to reverse.
// Numbers sort by their data-sort value, text by its letters; rows keep their
// order among equals. Nothing here reads or writes HTML, only moves rows.
(function () {
  "use strict";
  for (const table of document.querySelectorAll("table.sortable")) {
    const heads = [...table.tHead.rows[0].cells];
    heads.forEach((th, column) => {
      th.querySelector("button").addEventListener("click", () => {
        const ascending = th.getAttribute("aria-sort") !== "ascending";
        heads.forEach((other) => other.setAttribute("aria-sort", "none"));
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = [...body.rows].map((row, index) => ({ row, index }));
        const key = (row) => {
          const cell = row.cells[column];
          if (!cell) return "";
          const sort = cell.dataset.sort;
          return sort !== undefined && sort !== "" && !isNaN(Number(sort)) ? Number(sort) : cell.textContent.trim().toLowerCase();
        };
        rows.sort((a, b) => {
          const x = key(a.row), y = key(b.row);
          let order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
          if (!ascending) order = -order;
          return order || a.index - b.index;
        });
        body.append(...rows.map((r) => r.row));
      });
    });
  }
})();

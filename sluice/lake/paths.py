"""A lake location (a data file, a folder; a URI or a plain path) as a file system and a path in it.

Locations are taken literally, never percent-decoded. The catalog records the warehouse as
``file://`` + the folder as written (``file:///tmp/x/my lake é%41``), PyIceberg and Spark
record data files as the names they wrote (Spark escapes a partition value ``%41`` as the
folder ``s=%2541``), and PyIceberg's own file IO reads them literally. ``FileSystem.from_uri``
instead refuses a space or a non-ASCII character ("Cannot parse URI") and decodes ``%XX``,
opening (or deleting) a file that does not exist. Every lake module opens, lists, moves and
deletes through :func:`filesystem_of`, so there is one reading of a location.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow.fs as pafs

if TYPE_CHECKING:
    import pyarrow.parquet as pq


def filesystem_of(location: str) -> tuple[pafs.FileSystem, str]:
    """The file system holding ``location`` and its path there, taken literally.

    ``file:///a/b`` and Hadoop's ``file:/a/b`` are the local ``/a/b``; a location without a
    scheme is a local path; any other URI (``s3://bucket/key``) gets the file system pyarrow
    makes of its scheme and authority, and the rest of it as the path.
    """
    if location.startswith("file:"):
        return pafs.LocalFileSystem(), "/" + location[len("file:") :].lstrip("/")
    if "://" not in location:
        return pafs.LocalFileSystem(), location
    scheme, rest = location.split("://", 1)
    authority = rest.partition("/")[0]
    filesystem, _ = pafs.FileSystem.from_uri(f"{scheme}://{authority}/")
    return filesystem, rest


def open_input(path: str) -> Any:
    """A readable file for a data file path (a local path or any URI pyarrow knows).

    The path is taken literally, never percent-decoded: Iceberg writers escape partition
    values into directory names (PyIceberg and Spark write ``s=%5C`` for the value ``\\``)
    and record that name as is, so decoding (as ``FileSystem.from_uri`` does) opens a
    file that does not exist.
    """
    filesystem, inner = filesystem_of(path)
    return filesystem.open_input_file(inner)


def read_footer(path: str) -> pq.FileMetaData:
    """The Parquet footer (schema, row groups, statistics) of a data file."""
    import pyarrow.parquet as pq

    with open_input(path) as handle:
        return pq.read_metadata(handle)

"""Images in chat requests (vision-language models): where an ``image_url`` may come from, as
OVMS allows it (``data:`` base64, http(s) URLs of ``--allowed_media_domains``, files under
``--allowed_local_media_path``), and the decoded ``u8 [1, H, W, 3]`` tensor openvino-genai takes."""

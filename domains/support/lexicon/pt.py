"""Portuguese (European and Brazilian) phrases for the support intents (folded text)."""

_ORDER = (
    r"(?:encomenda|pacote|compra|entrega|produto|artigo|remessa|volume|envio|caixa|coisa"
    r"|pedido(?! de (?:reembols|estorn|cancel|devoluc|anulac|ajuda|informac|suporte|troca"
    r"|garantia|desculpa|compensac)))"
)
"""An order or parcel noun ("pedido" only where it is not "pedido de reembolso": a request)."""

PHRASES: dict[str, tuple[str, ...]] = {
    "duplicate_charge": (
        r"duas cobrancas",
        r"(?:duas|dois|2) (?:\w+ )?(?:cobrancas|debitos|pagamentos|transacoes|lancamentos"
        r"|movimentos|pre-?autorizacoes|autorizacoes)",
        r"(?:cobr|debit|pag|factur|fatur|descont|lanc|carreg|tiraram|tirou|retir)\w*"
        r"[^.?!]{0,30}(?:duas vezes|2 vezes|2x|em dobro|a dobrar|em duplicado|duplamente)",
        r"(?:duas vezes|2 vezes|2x)[^.?!]{0,30}(?:cobrad|cobrou|cobraram|debitad|debitou"
        r"|debitaram|pag|lancad|descontad|faturad|facturad)",
        r"(?:duas|2) vezes (?:no|na) (?:meu |minha )?(?:cartao|extrato|fatura|factura|conta)",
        r"cobranca (?:duplicada|dupla|em dobro|repetida|em duplicado)",
        r"(?:pagamento|debito|lancamento|transacao|valor|movimento)s? (?:duplicad|repetid|em dobro"
        r"|em duplicado)",
        r"(?:dupla|duplo) (?:cobranca|debito|pagamento|faturacao|facturacao|lancamento)",
        r"(?:debito|pagamento) duplo",
        r"cobrad[oa]s? (?:duas|em dobro|duplicad|2 vezes|a dobrar|duplamente)",
        r"duplicidade",
        r"(?:segunda|outra) cobranca",
        r"(?:segundo|outro) (?:debito|pagamento|lancamento) (?:igual|identico|do mesmo)",
        r"mesmo (?:valor|montante|pagamento|debito)[^.?!]{0,30}(?:duas vezes|2 vezes|2x"
        r"|de novo|novamente|repetid)",
        r"(?:paguei|pago|comprei|fiz a compra) (?:apenas|so|somente) (?:uma|1) vez",
        r"(?:so|apenas|somente) (?:fiz|realizei|efetuei|efectuei) (?:uma|1) (?:compra|encomenda"
        r"|pedido|pagamento)",
        r"(?:cobraram|cobrou|debitaram|descontaram)(?: me|-me)? (?:de novo|novamente|outra vez)",
    ),
    "refund_request": (
        # Whether the money came back: "se o dinheiro já voltou pro cartão"
        r"dinheiro (?:\w+ ){0,2}(?:voltou|volta|caiu|cai|retornou|foi estornado|foi devolvido)\b",
        r"devolv\w* (?:uma|a|as|um|o|os) (?:das |dos )?(?:cobranc|debito|pagamento|lancament)",
        # "Vou receber o valor todo?": the money back, asked as a question
        r"(?:vou|vamos|irei|vou poder|posso) (?:\w+ )?(?:receber|ter) (?:de volta )?(?:o valor|o dinheiro|o meu dinheiro|meu dinheiro|o reembolso|o estorno)",
        r"reembols(?!ad|aram|ou\b|o (?:da|de|pela|do|na|no|junto da|junto do|com a|a|ao) (?:empresa|firma|seguradora|seguro|trabalho|patrao))",
        r"(?:quando|ainda nao|nao) (?:\w+ ){0,2}reembolsad",
        r"(?:rembols|reenbols|reimbols|reembolc|rembolc|reembous|reembouls|reemblos)",
        r"estorn(?!ad|aram|ou\b)",
        r"extorn(?!ad|aram|ou\b)",
        r"(?:quando|ainda nao|nao) (?:\w+ ){0,2}(?:estornad|extornad)",
        r"devolv\w*(?:-me| me)? (?:o |a |meu |minha |o meu |a minha )?(?:dinheiro|valor"
        r"|montante|pagamento|quantia|importancia)",
        r"devolucao (?:do|de|da) (?:meu |minha )?(?:dinheiro|valor|pagamento|montante|quantia)",
        r"(?:dinheiro|valor|montante|pagamento|diferenca) de volta",
        # "quero os 249 euros todos de volta": an amount wanted back.
        r"(?:quero|queria|preciso|exijo) (?:\w+ ){0,4}(?:euros?|reais|dolares|r\$|€) (?:\w+ )?de volta",
        r"(?:receber|ter|reaver|recuperar) (?:\w+ ){0,2}de volta",
        r"(?:reaver|recuperar) (?:o |meu |o meu )?(?:dinheiro|valor|montante)",
        r"ressarc",
        r"restitui\w* (?:do |o |de )?(?:valor|dinheiro|montante|pagamento)",
        r"(?:quero|queria|exijo|exigo|devolvam|devolvam-me) (?:o |meu |o meu )dinheiro",
        r"(?:resto|restante) do (?:valor|dinheiro|reembolso|estorno|montante)",
        r"(?:reverter|anular|cancelar) (?:a |o |essa |esta |este |esse )?(?:cobranca|debito)",
        r"(?:onde|cade) (?:esta |anda )?(?:o |meu |o meu )?(?:dinheiro|estorno|reembolso)",
    ),
    "cancellation": (
        r"cancel(?:ar|em|e|a|am|o|ara|arem|asse|assem|ando|amos|amento)\b(?! (?:a |o |minha |meu "
        r"|a minha |o meu |da |do |essa |esta |este |esse )?(?:assinatura|subscric|mensalidade"
        r"|plano|renovacao|cobranca|debito))",
        r"(?:cancellar|cancelr|canselar|cansela|canselem|cancelmento|canselamento|cancelamneto)",
        r"anul(?:ar|em|e|a|am|asse|ando)\b(?! (?:a |o |minha |meu |a minha |o meu |da |do |essa "
        r"|esta |este |esse )?(?:assinatura|subscric|mensalidade|plano|renovacao|cobranca|debito))",
        r"anulacao (?:da|do|de) (?:minha |meu )?(?:encomenda|pedido|compra)",
        r"pedido de (?:cancelamento|anulacao)",
        r"desist\w* (?:da|de|do) (?:minha |meu |essa |esta |este |esse )?(?:compra|encomenda|pedido)",
        r"(?:ja )?nao (?:quero|preciso) mais (?:a |o |da |do |esta |este |essa |esse )?"
        r"(?:encomenda|pedido|produto|artigo|compra)",
        r"ja nao (?:quero|preciso) (?:a |o |da |do |esta |este |essa |esse )?(?:encomenda"
        r"|pedido|produto|artigo|compra)",
        r"(?:parar|parem|pare|travar|travem|interromper|interrompam|bloquear) (?:o |a )?"
        r"(?:envio|encomenda|pedido|expedicao|entrega)",
        r"(?:nao|ja nao) (?:enviem|envie|mandem|expecam|despachem) (?:a |o )?(?:minha |meu )?"
        r"(?:encomenda|pedido|artigo|produto)",
        r"desfazer (?:a |o )?(?:compra|pedido|encomenda)",
    ),
    "late_delivery": (
        # "até agora nenhum dos dois chegou", "meu pedido não chega nunca"
        r"(?:nenhum|nenhuma)(?: \w+){0,3} (?:chegou|chegaram|veio|vieram)\b",
        r"nao (?:me )?chega(?:m)? nunca|nunca (?:me )?chega(?:m)?\b",
        # "nem chegou ainda", "tá PARADA há duas semanas"
        r"(?:ainda )?nem (?:\w+ )?chegou",
        r"(?:esta|ta|tá|continua|segue|fica) parad[oa]",
        # "era pra ter chegado faz mais de um mes", "ate agora nada de chegar"
        r"(?:era|eram|devia|deveria) (?:pra|para|p/) (?:ter )?(?:chegado|chegar|sido entregue)",
        r"nada de (?:chegar|entregar|aparecer)",
        r"continua sem (?:aparecer|chegar|noticias|novidades|sinal)",
        r"(?:passad[oa]s|ja passaram) (?:mais de |quase )?(?:\w+ )?(?:semanas|meses)\b",
        r"(?:faz|ha) mais de (?:\w+ )?(?:semanas|meses|um mes)\b",
        # When it will come ("quando chega?", "quando vou receber?"), where it is ("cadê?")
        r"quando (?:\w+ ){0,5}(?:chega|chegara|chegam|vou receber|recebo|entregam|entregue)\b",
        r"cade (?:o|a|os|as|meu|minha|meus|minhas)\b(?! (?:\w+ )?(?:reembolso|estorno|dinheiro"
        r"|pontos|fatura|nota))",
        # Portuguese: shipped or not, and where it is ("já foi expedida ou não? Onde está?")
        r"(?:ja )?foi (?:expedid|enviad|despachad)[ao]s? ou nao",
        r"(?:^|[.!?] )onde (?:esta|anda|estao|andam)(?: ela| ele| elas| eles)?\s*\?",
        r"onde (?:esta|estao|anda|andam|para|param|ficou) (?:\w+ ){0,3}" + _ORDER,
        r"cade (?:\w+ ){0,3}" + _ORDER,
        r"(?:nao|nunca|ainda nao) (?:me )?(?:chegou|chegaram|recebi|recebemos|veio|vieram"
        r"|foi entregue|foram entregues|foi enviad|foi expedid|foi despachad)"
        r"(?![^.?!]{0,30}(?:reembols|estorn|dinheiro|valor|credito|email|e-mail|fatura|factura"
        r"|resposta|codigo|mensagem|recibo|nota|na caixa|no pacote|na embalagem|dentro))",
        r"nao entregue",
        _ORDER + r"s? (?:\w+ ){0,2}(?:atrasad|com atraso|demorad|esta a demorar|esta demorando)",
        r"(?:esta|estao|anda|vem|chegou|chegara) (?:muito |bastante |bem )?(?:atrasad|com atraso)",
        r"atraso (?:na|da|de|no|do|com a|com o) (?:minha |meu )?" + _ORDER,
        r"(?:demora|demorando|a demorar|demorar|tanta demora) (?:\w+ ){0,3}(?:entrega|encomenda"
        r"|pedido|chegar|envio|enviar|pacote)",
        r"(?:esta|estao) (?:a demorar|demorando) (?:muito|demasiado|tanto)",
        r"rastre(?:io|amento|ar|ei|o)",
        r"tracking",
        r"(?:codigo|numero|link|nr) (?:de |do )?(?:seguimento|rastreio|rastreamento"
        r"|acompanhamento|objeto)",
        r"seguimento (?:da|do) (?:minha |meu )?" + _ORDER,
        r"acompanhar (?:a |o )?(?:minha |meu )?" + _ORDER,
        r"(?:estado|status|situacao|ponto de situacao|andamento|novidades) (?:da|do|de|sobre a"
        r"|sobre o) (?:minha |meu )?" + _ORDER,
        r"(?:duvida|pergunta|questao|informacao) sobre (?:a |o )?(?:\w+ )?(?:entrega|envio)",
        r"extravi",
        _ORDER + r"s? (?:\w+ ){0,2}(?:perdid|desaparecid|sumiu|sumid)",
        r"quando (?:e que )?(?:\w+ ){0,3}(?:chega|chegara|vai chegar|sera entregue|e entregue"
        r"|vou receber|recebo|vao entregar|entregam|vao enviar|enviam)\b"
        r"(?![^.?!]{0,25}(?:reembols|estorn|dinheiro|credito|valor|resposta))",
        r"previsao de (?:entrega|chegada)",
        r"(?:passou|ultrapassou|excedeu|fora d)o prazo",
        r"prazo (?:de entrega )?(?:\w+ ){0,2}(?:passou|ultrapassad|expirou|terminou|excedid|acabou)",
        r"(?:rastreio|rastreamento|tracking|seguimento|estado) (?:\w+ ){0,3}(?:parad|nao atualiza"
        r"|nao actualiza|sem atualiz|sem actualiz|nao muda|nao se mexe|igual ha)",
        r"(?:parad|pres|retid)[oa]s? (?:na|no|em) (?:alfandega|transportadora|centro|armazem"
        r"|correios|ctt|aduana|fiscalizacao)",
        r"sem (?:atualizacao|atualizacoes|actualizacao|actualizacoes|movimentacao|movimento)",
        r"(?:esperar|aguardar|esperando|aguardando|a espera|a aguardar|aguardo|espero) (?:\w+ ){0,3}"
        + _ORDER,
        r"(?:diz|consta|aparece|indica|marca) (?:como |que foi )?entregue",
    ),
    "damaged_item": (
        r"danific",
        r"(?:chegou|chegaram|veio|vieram|recebi|recebemos|entregue|entregaram|vinha|estava)"
        r" (?:\w+ ){0,4}(?:partid|quebrad|estragad|amassad|riscad|rachad|amolgad|esmagad|rasgad"
        r"|estalad|trincad|lascad|destruid|furad|molhad|aos bocados|em pedacos|em cacos)",
        r"(?:caixa|embalagem|pacote|volume|encomenda)s? (?:\w+ ){0,2}(?:amassad|esmagad|rasgad"
        r"|molhad|destruid|furad|amolgad|aberta e)",
        r"(?:ecra|tela|vidro|visor|tampa|espelho)s? (?:\w+ ){0,2}(?:partid|rachad|quebrad"
        r"|estalad|trincad)",
        r"amolgad",
        r"amassad",
        r"rachad",
        r"trincad",
        r"lascad",
        r"riscad",
        r"(?:em pedacos|aos bocados|em cacos|em mil pedacos|feito em fanicos)",
        r"danos? (?:no|durante o|de|do) (?:transporte|envio|entrega)",
        r"(?:avariad|estragad|partid|quebrad)[oa]s? (?:no|durante o|pelo) (?:transporte|envio"
        r"|caminho)",
        r"mal (?:embalad|acondicionad)",
        r"(?:chegou|veio) (?:todo |toda )?(?:estragad|dan|partid)",
    ),
    "defective_item": (
        r"(?:ta|esta|estao|tao|fica|continua) (?:\w+ )?(?:vazando|a vazar|pingando|a pingar)",
        # "O leitor digital nunca funcionou direito"
        r"nunca funcionou(?: direito| bem)?",
        r"n[aã]o funciona (?:direito|bem)",
        # Portuguese: symptoms of a fault, read from the h26 train tickets
        r"fica (?:travad[oa]|pres[oa]|bloquead[oa]) n[ao]",
        r"desliga sozinh[oa]",
        r"nao liga (?:mais)?",
        r"parou de funcionar",
        r"nao (?:funciona|funcionam|liga\b(?! (?:para|pra|a|ao|nenhum))|acende|acendem|carrega"
        r"|carregam|arranca|emparelha|conecta|liga mais|funciona mais|funciona bem"
        r"|funciona direito|da sinal|faz nada|aquece|arrefece|esfria|imprime|le)\b",
        r"(?:deixou|deixaram|parou|pararam|deixa) de (?:funcionar|ligar|carregar|dar|trabalhar"
        r"|responder|acender|aquecer|conectar|emparelhar)",
        r"(?:nao|ja nao) (?:esta a )?funcionar",
        r"defeit",
        r"avaria",
        r"avariou",
        r"(?:quebrou|estragou|pifou|queimou|se estragou|deu o berro|deu pau|bugou)",
        r"funciona mal",
        r"mal funcionamento",
        r"(?:com |tem |faz )?(?:um )?(?:barulho|ruido|som) (?:estranho|esquisito)",
        r"(?:desliga|reinicia|apaga)(?:-se)? sozinh",
        r"(?:ecra|tela) (?:\w+ )?(?:preta|preto|negro|negra|em branco|apagad|nao acende|piscando"
        r"|a piscar)",
        r"bateria (?:\w+ )?(?:nao carrega|nao segura|dura pouco|viciad|morre|nao aguenta)",
        r"(?:na|em|pela|dentro da|coberto pela|acionar a|accionar a|ativar a|usar a) garantia",
        r"garantia (?:do|da|de) (?:produto|fabricante|fabrica)",
        r"(?:falha|defeito|vicio) (?:de fabrico|de fabrica|de fabricacao|tecnic)",
        r"com (?:falhas?|anomalias?|erro) (?:de|no|ao|a) (?:funcionamento|ligar|carregar)",
        r"(?:sempre|continua) (?:a dar|dando) erro",
        r"(?:esta|veio) (?:com )?(?:problema|problemas) (?:de|no|na) (?:funcionamento|bateria"
        r"|carregamento|ecra|tela|som|ligacao)",
    ),
    "wrong_item": (
        # "Pedi a caixinha de som (pedido 12339) e veio um mouse sem fio no lugar."
        r"(?:pedi|encomendei|comprei|escolhi) (?:[\w#]+\s*|[()]\s*){1,10}e (?:me )?(?:veio|vieram|chegou|chegaram|recebi|mandaram|enviaram) (?:um|uma|o|a|outr)",
        r"(?:veio|vieram|chegou|mandaram) (?:um|uma|o|a) [^.?!]{1,40} no lugar\b",
        # "Pedi um filtro de água (pedido 12349) e veio um mouse sem fio na caixa"
        r"(?:pedi|encomendei|comprei|escolhi) (?:\w+ |\(|\)|\d+ ){1,8}e (?:me )?(?:veio|vieram|chegou|chegaram|recebi|mandaram|enviaram) (?:um|uma|o|a|outr)",
        r"trocar pel[oa] (?:produto|artigo|item|tamanho|modelo) (?:certo|correto|correcto|que pedi|que encomendei)",
        # "não tem nada a ver com o que pedi": something else came.
        r"nada a ver com (?:o que|a minha|o meu|a encomenda|o pedido|o produto|aquilo)",
        r"(?:vinha|veio|vieram|chegou|chegaram|estava|mandaram|enviaram)\b[^?!]{1,60}\bnada a ver\b",
        # "Como faço para receber as sapatilhas certas?": the right item, not the one sent.
        r"(?:receber|mandem|enviem|mandar|enviar) (?:o|a|os|as) (?:\w+ ){1,2}(?:cert[oa]s?|corret[oa]s?"
        r"|que (?:eu )?(?:pedi|encomendei|comprei))\b",
        r"(?:recebi|chegou|veio|vieram|enviaram|mandaram|entregaram)\b[^.?!]{0,50}\bnao tem nada a"
        r" ver",
        r"(?:produto|artigo|item|tamanho|cor|modelo|encomenda|pedido|coisa|versao|livro"
        r"|peca)s? (?:\w+ )?errad",
        r"(?:enviaram|mandaram|recebi|recebemos|veio|vieram|chegou|chegaram|entregaram|enviou"
        r"|mandou)(?: me|-me)? (?:\w+ ){0,3}errad",
        r"(?:enviaram|mandaram|veio|vieram|recebi|chegou|entregaram)(?: me|-me)? (?:\w+ ){0,2}"
        r"(?:outro|outra|diferente) (?:produto|artigo|item|modelo|cor|tamanho|coisa|livro)",
        r"(?:produto|artigo|item|modelo) diferente",
        r"nao (?:e|era|sao|eram|foi|foram) (?:o |a |os |as |isso |isto )?(?:\w+ )?(?:que|qual) (?:eu )?(?:pedi"
        r"|encomendei|comprei|escolhi|encomendamos)",
        r"nao corresponde (?:ao|a|com o|com a|aquilo) (?:\w+ )?(?:que|pedido|encomenda"
        r"|encomendado|anuncio|descricao|comprado|foto)",
        r"(?:diferente|diverso) (?:do|daquilo|da) (?:que|pedido|encomendado|anunciado|comprado"
        r"|encomenda|foto)",
        r"(?:trocaram|confundiram) (?:o |a |os |as )?(?:\w+ )?(?:produto|artigo|encomenda"
        r"|pedido|tamanho|cor|modelo|item)",
        r"(?:pedi|encomendei|comprei|escolhi) (?:\w+ ){1,4}mas (?:\w+ ){0,2}(?:recebi|veio|vieram"
        r"|chegou|mandaram|enviaram|entregaram) (?!(?:\w+ ){0,2}(?:partid|danific|quebrad|avariad"
        r"|riscad|estragad|amassad|rachad|sem\b|incomplet|defeit|atrasad|tarde|so\b|apenas|com\b"
        r"|nada|metade))",
        r"(?:pedido|encomenda|pacote|caixa) de outr[oa] (?:pessoa|cliente)",
        r"(?:enviad|mandad|entregue)[oa]? (?:\w+ )?por engano",
        r"engano no (?:envio|produto|pedido|artigo)",
        r"nao (?:e|era) o (?:meu|produto certo|artigo certo|modelo certo)",
    ),
    "return_request": (
        r"devoluc(?:ao|oes)\b(?! (?:do|de|da) (?:meu |minha )?(?:dinheiro|valor|montante"
        r"|pagamento|quantia|diferenca))",
        r"(?:mandar|enviar|remeter|entregar|despachar|mando|envio) (?:\w+ ){0,2}de volta",
        r"(?:politica|prazo|condicoes|regras|processo|formulario) de (?:devolucao|devolucoes"
        r"|troca|trocas)",
        r"trocar (?:o |a |os |as )?(?:\w+ ){0,2}(?:por (?:outr|um|uma)|de tamanho|de cor"
        r"|de modelo|por tamanho)",
        r"(?:quero|queria|gostaria de|posso|como|da para|e possivel) (?:\w+ )?trocar",
        r"nao (?:me )?(?:serve|servem|ficou bem|ficaram bem|assenta bem)\b(?! (?:para|pra) nada)",
        r"nao gostei (?:do|da|dos|das) (?:produto|artigo|cor|tamanho|modelo|material|tecido"
        r"|qualidade|corte)",
        r"(?:mudei|mudamos) de ideia",
        r"arrependi",
        r"direito de (?:arrependimento|livre resolucao|desistencia|devolucao)",
        r"livre resolucao",
        r"(?:etiqueta|guia|codigo|autorizacao|numero|pedido) de (?:devolucao|postagem|retorno"
        r"|recolha)",
        r"logistica reversa",
        r"(?:nao usad[oa]s?|por usar|sem uso|nunca usad[oa]s?|ainda (?:na|com a) embalagem"
        r"|com (?:as )?etiquetas?)",
        r"retornar (?:o|a|os|as) (?:produto|artigo|item|encomenda)",
        # "Posso devolvê-lo?", "quero devolver a manta": sending it back, not the money back.
        r"(?:posso|podemos|quero|queria|gostaria de|preciso|vou|da para|e possivel|como)"
        r" (?:\w+ ){0,2}devolv\w*(?:-(?:lo|la|los|las))?"
        r"(?! (?:\w+ ){0,2}(?:dinheiro|valor|montante|pagamento|diferenca|quantia|cobranc\w*"
        r"|debito\w*|lancament\w*|estorno|reembolso|frete|taxa))",
        r"(?:recolher|recolham|buscar|busquem) (?:o |a )?(?:produto|artigo|encomenda)",
    ),
    "price_error": (
        r"(?:devolv\w*|devolve\w*|reembols\w*|estorn\w*) a diferenca",
        r"(?:custa|custam|custava|custavam)\w* (?:\w+ ){0,3}(?:[€$£]\s?)?\d[\d.,]*\s?(?:€|euros?|eur|reais|dollars?)?\s?(?:a )?menos",
        r"(?:preco|valor)s? (?:\w+ ){0,3}(?:baixou|baixaram|desceu|caiu|diminuiu|reduziu"
        r"|mais baixo|menor|inferior|em promocao|em saldo)",
        r"(?:baixou|baixaram|desceu|caiu|reduziram|reduziu|baixaram) (?:o |de |os )?(?:preco"
        r"|valor)",
        r"(?:ficou|esta|ta|agora esta|agora custa|passou a custar|custa agora) (?:\w+ )?"
        r"(?:mais barat|em promocao|em saldo|com desconto|em oferta)",
        r"(?:cobrir|cobrem|cubram|igualar|igualam|igualem|acompanhar|acompanham|baterem|bater)"
        r" (?:o |de |do |esse |este )?(?:preco|valor|oferta|promocao)",
        r"(?:garantia|correspondencia|cobertura|igualdade) de (?:preco|precos|oferta)",
        r"price ?match",
        r"preco (?:\w+ )?(?:diferente|errad|incorret|mais alto|maior|superior)",
        r"(?:cobraram|cobrou|paguei|cobrad[oa]|debitaram|faturaram|facturaram)(?: me|-me)?"
        r" (?:\w+ ){0,4}(?:mais do que|mais que|acima do|diferente do|a mais)",
        r"(?:diferenca|discrepancia) (?:de|do|no|nos) (?:preco|valor|precos)",
        r"(?:preco|valor) (?:anunciado|mostrado|indicado|exibido|apresentado|que aparecia"
        r"|do site|no site|da loja|do carrinho|na pagina|no anuncio)",
        r"(?:promocao|desconto|cupao|cupom|codigo promocional|codigo de desconto|voucher)s? "
        r"(?:\w+ ){0,3}(?:nao (?:foi |)(?:aplicad|aceite|aceito|funcionou|descontad"
        r"|contabilizad|entrou|considerad))",
        r"mais barat[oa] (?:agora|hoje|uma semana|dias depois|no dia|na|no|noutr|em outr"
        r"|na concorrencia)",
        r"(?:concorrencia|concorrente|outra loja|noutra loja|em outro site|noutro site)"
        r"[^.?!]{0,40}(?:preco|barat|valor)",
        r"(?:preco|barat|valor)[^.?!]{0,40}(?:concorrencia|concorrente|outra loja|noutra loja"
        r"|outro site|noutro site)",
        r"(?:reembolsar|devolver|devolvam|estornar|estornem|pagar|receber|reembolsem|reembolso"
        r"|estorno|devolucao) (?:\w+ )?(?:da |a )?diferenca",
        r"(?:entrou|ficou|esta|entrar|passou) em (?:saldos?|promocao)",
    ),
    "gift_card": (
        r"cart(?:ao|oes)[- ](?:de )?(?:presente|oferta|prenda|brinde)",
        r"vale[- ](?:presente|oferta|de compras|compras|prenda|de oferta)",
        r"vales[- ](?:presente|oferta|de compras|prenda)",
        r"cheque[- ](?:prenda|presente|oferta|de oferta)",
        r"gift ?cards?",
        r"giftcard",
        r"codigo (?:do|de) (?:vale|cartao[- ]presente|cartao de oferta|presente|oferta)",
        r"saldo (?:do|no|de) (?:meu )?(?:vale|cheque)",
        r"cartao (?:oferta|presente)",
    ),
    "callback": (
        r"(?:liguem|ligue|ligar|telefonem|telefone|telefonar|retornem|ligarem|telefonarem|liga)"
        r"(?:-me| me| para mim| pra mim| de volta)",
        r"me (?:liguem|ligue|ligar|ligarem|telefonem|telefone|telefonar|retornem|liga|ligassem"
        r"|ligasse|telefonassem)\b",
        r"(?:pode|podem|poderiam|podiam|gostaria que|queria que|preciso que|peco que|agradeco que)"
        r"(?: me)? (?:ligar|ligassem|ligasse|liguem|ligue|telefonar|telefonassem|telefonem"
        r"|contactar por telefone|contatar por telefone)",
        r"chamada (?:de volta|de retorno|telefonica)",
        r"(?:receber|marcar|agendar|agende|agendem|marquem|combinar) (?:uma )?(?:chamada|ligacao"
        r"|telefonema|contacto telefonico|contato telefonico)",
        r"(?:ligacao|chamada|telefonema) (?:de retorno|de volta)",
        r"retorno (?:por telefone|telefonico|de ligacao|da ligacao|por ligacao)",
        r"retorn\w* (?:a |minha |a minha )?(?:ligacao|chamada)",
        r"(?:contactar|contatar|contacte|contate|contactem|contatem|falar)(?:-me| me)? (?:\w+ ){0,2}"
        r"(?:por|pelo|via|ao|no) (?:telefone|telemovel|celular|whatsapp|fone)",
        r"(?:ligacao|chamada|telefonema|ligar|ligue|liguem) (?:\w+ ){0,2}(?:as|pelas|entre as"
        r"|por volta das|depois das|antes das|a partir das) \d",
        r"(?:ligacao|chamada|telefonema|ligar|ligue|liguem) (?:amanha|hoje|de manha|a tarde"
        r"|ao fim do dia|a noite)",
        r"falar com (?:alguem|uma pessoa|um atendente|um assistente) (?:por|ao|pelo) telefone",
        r"callback",
        r"call ?back",
    ),
    "complaint": (
        r"advogad",
        r"(?:processar|processa-los|processar-vos|processo contra) (?:voces|vcs|a empresa|a loja"
        r"|vos|esta empresa|essa empresa)",
        r"(?:vou|vamos|irei) processar",
        r"(?:meter|por|colocar|levar|entrar)(?: isto| isso| voces| vcs)? (?:em |no |ao |a |na "
        r"|com )?(?:tribunal|justica|juizado)",
        r"(?:acao|processo|medidas|via) (?:judicial|judiciais|legal|legais)",
        r"pequenas causas",
        r"procon",
        r"reclame ?aqui",
        r"livro de reclamacoes",
        r"portal da queixa",
        r"deco proteste",
        r"consumidor\.gov",
        r"(?:defesa|direitos|protecao|associacao) (?:do|de|dos) consumidor",
        r"chargeback",
        r"contest\w* (?:a |o |esta |essa |este |esse )?(?:compra|cobranca|pagamento|transacao"
        r"|debito)",
        r"(?:abrir|abrirei|vou abrir|abro) (?:uma )?(?:disputa|contestacao)",
        r"(?:falar com|quero|exijo|chamem|passem-me|passe-me|chama|chamar) (?:\w+ ){0,2}"
        r"(?:gerente|supervisor|responsavel|superior|chefe|humano|pessoa real|pessoa de verdade)",
        r"(?:atendente|atendimento|pessoa|operador|assistente) (?:humano|real|de verdade)",
        r"nao (?:quero|aguento) (?:falar com )?(?:um |o |mais )?(?:robo|bot|maquina)",
        r"(?:absurd|ridicul|vergonh|inaceitavel|revoltad|indignad|palhacada|pessim|horrivel"
        r"|lamentavel|escandal|descaso|incompet|furios|inadmissivel|desrespeito|falta de respeito)",
        r"(?:estou |ando |)(?:farto|farta|fartos|cansad[oa]) de",
        r"nunca mais (?:compro|volto|encomendo)",
        r"pior (?:loja|atendimento|servico|empresa|experiencia)",
        r"(?:isto|isso) e (?:uma )?(?:piada|fraude|roubo|burla|golpe|uma merda)",
        r"(?:ladroes|ladrao|vigaristas|vigarice|caloteiros)",
        r"(?:fazer|apresentar|registar|registrar|abrir|deixar|fazer uma) (?:uma )?(?:queixa"
        r"|reclamacao formal)",
        r"reclamacao formal",
        r"(?:expor|denunciar) (?:\w+ ){0,2}(?:nas redes|publicamente|no facebook|no instagram)",
    ),
    "acknowledgement": (
        r"(?:recebi|chegou|caiu) (?:o |a |meu |minha )?(?:estorno|reembolso|dinheiro)[,.!]? (?:\w+ )?"
        r"(?:tudo|esta tudo|ta tudo) (?:certinho|certo|ok|resolvido|bem)",
        # "Valeu, pessoal! Chegou tudo certinho, pode fechar o chamado"
        r"(?:pode|podem) (?:fechar|encerrar) o (?:chamado|ticket|pedido de suporte|caso|protocolo)",
        r"(?:chegou|veio|esta) tudo (?:certinho|certo|ok|perfeito|direitinho)",
        r"(?:chegou|chegaram|veio|vieram) (?:\w+ )?(?:certinho|direitinho|perfeitinho|em perfeito"
        r" estado|sem problemas|sem nenhum problema)",
        r"(?:ja )?chegou tudo",
        r"obrigad[oa] pela (?:ajuda|atencao|rapidez|resolucao|resposta)",
        r"obrigad[oa],? (?:tudo|ja(?! agora)|chegou|resolvido|recebi|esta resolvido|deu certo|funcionou)",
        r"(?:muito )?obrigad[oa],? (?:ja |)(?:esta|ficou) (?:tudo )?(?:resolvido|certo|ok|bem)",
        r"(?:problema|assunto|questao|situacao|caso) (?:ja )?(?:esta |foi |ficou )?(?:resolvid"
        r"|solucionad|encerrad|arrumad|tratad)",
        r"assunto (?:por )?encerrado",
        r"ja (?:esta |ficou |foi )?(?:tudo )?resolvid",
        r"(?:ja (?:esta |ficou )?|ficou )tudo (?:certo|ok|em ordem|tratado|resolvido)",
        r"(?:ja )?(?:chegou|recebi|recebemos|apareceu)[,.!]? (?:\w+ )?(?:obrigad|tudo certo"
        r"|tudo bem|tudo ok|valeu)",
        r"(?:ja )?(?:recebi|chegou) (?:o |a |meu |minha )?(?:reembolso|estorno|dinheiro"
        r"|encomenda|pedido)[,.!]? (?:\w+ )?(?:obrigad|valeu|tudo certo)",
        r"(?:pode|podem) (?:fechar|encerrar|arquivar) (?:o |este |esse |a |esta )?(?:pedido"
        r"|ticket|caso|chamado|processo|reclamacao|pedido de suporte)",
        r"(?:ignorem|ignore|desconsiderem|desconsidere) (?:o |a |a minha |o meu |meu |minha )?"
        r"(?:mensagem|email|e-mail|pedido)(?: anterior)?",
        r"nao (?:e |e mais |)(?:preciso|necessario) (?:mais nada|fazer nada)",
        r"ja (?:deu|esta) certo",
        r"valeu,? (?:ja|tudo|chegou|resolvido)",
        r"^\W*tudo (?:certo|ok|resolvido|em ordem)\b",
    ),
    "goodwill_credit": (
        r"(?:cupom|cupao|vale|credito|desconto|compensacao) (?:\w+ ){0,3}pel[oa] (?:\w+ )?(?:transtorno"
        r"|incomodo|chateacao|trabalho|inconveniente|atraso|demora|confusao|dor de cabeca)",
        # "um cupom pelo transtorno"
        r"(?:cupom|cupao|vale|desconto|credito|compensacao|indenizacao) (?:\w+ ){0,3}pel[oa] (?:transtorno|incomodo|chatice|atraso|problema|aborrecimento)",
        r"compensac",
        r"compensa(?:r|rem|rmos|rme)\b",
        r"compensem",
        r"indeniza",
        r"indemniza",
        r"(?:vale|cupao|cupom|cupon|voucher|codigo de desconto|desconto|credito|bonus|brinde"
        r"|oferta) (?:\w+ ){0,3}(?:pelo|pela|pelos|pelas|como) (?:\w+ )?(?:transtorno|incomodo"
        r"|atraso|inconveniente|chatice|problema|trabalho|espera|situacao|compensacao|desculpa"
        r"|aborrecimento|demora)",
        r"(?:algum|alguma|um|uma|qualquer) (?:tipo de |forma de )?(?:compensacao|credito"
        r"|gesto|bonus|brinde|indemnizacao|indenizacao)"
        r"(?![^.?!]{0,10}(?:cartao|codigo promocional))",
        r"gesto (?:comercial|de boa vontade|de compensacao|simpatico)",
        r"(?:credito|creditos) (?:na|em|para a|para) (?:minha )?(?:conta|loja)",
        r"credito (?:de loja|na loja)",
        r"(?:oferecer|oferecam|oferecem|dar|deem|darem|merecia|mereco|mereciamos|poderiam|podiam"
        r"|podem) (?:\w+ ){0,3}(?:desconto|cupao|cupom|vale|credito|compensacao"
        r"|brinde|frete gratis|portes gratis|envio gratis|algo em troca)",
        r"(?:frete|portes|envio) (?:gratis|gratuito) (?:na|para a|numa|em uma|nas) (?:proxima"
        r"|proximas)",
        r"(?:desconto|cupom|cupao|vale) (?:na|para a|numa|em uma|nas) proximas? (?:compra"
        r"|encomenda|pedido)",
        r"(?:o minimo|no minimo) (?:que )?(?:podiam|podem|poderiam|deveriam|devem)",
        r"vale de desconto",
        r"(?:algo|alguma coisa) (?:pelo|pela|em troca|para compensar)",
        r"pelo (?:incomodo|transtorno)(?: causado)?[^.?!]{0,20}(?:merec|esper|gostaria|queria"
        r"|compens|oferec)",
    ),
    "keep_order": (
        # "reativar a encomenda"
        r"reativ(?:ar|em|e|ado)\b",
        r"nao (?:cancelem|cancele|cancela|cancelar|quero mais cancelar|anulem|anule"
        r"|anular|precisa cancelar|precisam cancelar|e preciso cancelar"
        r"|e necessario cancelar|ha necessidade de cancelar|ha necessidade de anular)",
        r"(?:(?:ja )?nao (?:preciso|precisamos) (?:de |mais |)|ja nao (?:quero|queremos) (?:mais )?|nao (?:quero|queremos) mais )(?:cancelar|anular"
        r"|o cancelamento|a anulacao|cancelamento)",
        r"(?:ja )?nao (?:e|e mais) (?:preciso|necessario) (?:cancelar|anular)",
        r"(?:esquecam|esqueca|ignorem|ignore|desconsiderem|desconsidere)[^.?!]{0,40}"
        r"(?:cancelamento|cancelar|anular|anulacao)",
        r"(?:vou|vamos|quero|prefiro|decidi|resolvi|acabei por|vou acabar por|gostaria de) ficar"
        r" com",
        r"fico com (?:ele|ela|eles|elas|a encomenda|o pedido|o produto|o artigo|a compra|tudo)",
        r"(?:manter|mantenham|mantenha|mantem|mantemos) (?:o |a |meu |minha |o meu |a minha )?"
        r"(?:pedido|encomenda|compra)",
        r"(?:desfazer|desfacam|reverter|revertam|anular|anulem|cancelar|cancelem|retirar|revogar"
        r"|sem efeito) (?:o |a |meu |o meu |esse |este )?(?:\w+ ){0,2}(?:cancelamento|anulacao)",
        r"(?:reativar|reativem|reative|reactivar|reactivem|reabrir|restaurar|restaurem|repor"
        r"|reponham|retomar|retomem) (?:o |a |meu |minha )?(?:\w+ )?(?:pedido"
        r"|encomenda|compra)",
        r"(?:cancel|anul)\w* (?:\w+ )?(?:por engano|sem querer|por erro|por lapso|sem (?:eu )?"
        r"(?:pedir|autorizar|solicitar|querer))",
        r"(?:continuem|prossigam|sigam|avancem|continuar|prosseguir) com (?:o|a) (?:envio|pedido"
        r"|encomenda|entrega|expedicao)",
        r"afinal (?:\w+ )?(?:quero|vou querer|ainda quero|fico|mantenho)\b(?! (?:cancelar|anular"
        r"|devolver|o reembolso|reembolso|o dinheiro))",
        r"(?:ainda|continuo a|continuo) (?:quero|querer) (?:o |a )?(?:pedido|encomenda|produto"
        r"|artigo|compra)",
        r"(?:mudei|mudamos) de ideia[^.?!]{0,40}(?:cancel|anul|ficar|manter)",
        r"descancel",
    ),
    "missing_item": (
        r"(?:falta|faltam|faltava|faltavam|faltou|faltaram|faltando|a faltar) (?:\w+ ){0,3}"
        r"(?:artigo|item|itens|peca|produto|parte|acessorio|componente|unidade|carregador|cabo"
        r"|manual|parafuso|na caixa|no pacote|na encomenda|do pedido|da encomenda|no pedido"
        r"|na embalagem|comando|controle)",
        r"(?:esta|estao|estava|estavam) (?:a faltar|faltando)",
        # "a caixa nem trazia o cabo": what the box should have held and did not.
        r"(?:nao|nem) (?:trazia|traz|trouxe|tinha|vinha com|veio com) (?:o|a|os|as) (?:\w+ )?"
        r"(?:carregador|cabo|comando|controle|acessorio|manual|peca|pecas|tampa|bateria|pilhas"
        r"|base|suporte|adaptador|fonte)",
        r"(?:veio|vieram|chegou|chegaram) (?:\w+ ){0,2}sem (?:o |a |os |as )?(?:\w+ )?"
        r"(?:carregador|cabo|comando|controle|acessorio|manual|peca|pecas|tampa|bateria|pilhas"
        r"|artigo|item|produto|parte|unidade)",
        r"(?:encomenda|pedido|entrega|caixa|pacote|kit|conjunto|conteudo)s? (?:\w+ )?incomplet",
        # "chegou, mas sem o recipiente", "veio só o corpo do aparelho"
        r"(?:veio|vieram|chegou|chegaram),? (?:mas |porem )?sem (?:o|a|os|as) (?!(?:\w+ )?"
        r"(?:problema|atraso|dano|demora|fatura|factura|nota))",
        r"(?:veio|vieram|chegou|chegaram) (?:so|apenas|somente) (?:o|a|os|as|um|uma|metade|parte)\b",
        r"(?:veio|vieram|chegou|chegaram|recebi) incomplet",
        r"(?:so|apenas|somente) (?:veio|vieram|chegou|chegaram|recebi|trazia) (?:\w+ ){0,2}"
        r"(?:um|uma|1|dois|duas|2|metade|parte)",
        r"(?:um|uma|1|dois|duas|outro|outra) (?:dos|das) (?:artigos|itens|produtos|pecas)"
        r"[^.?!]{0,30}(?:nao veio|nao vieram|nao chegou|nao estava|falta|em falta)",
        r"(?:artigo|item|peca|parte|unidade)s? em falta",
        r"nao (?:vinha|veio|estava|estavam|vieram) (?:na|no|dentro da|dentro do) (?:caixa|pacote"
        r"|embalagem|encomenda)",
        r"(?:caixa|embalagem|pacote) (?:\w+ )?vazi[oa]",
        r"(?:nao veio|nao vieram|veio sem|vieram sem) (?:o|a|os|as) (?:\w+ )?(?:carregador|cabo"
        r"|comando|controle|acessorio|manual|pecas|peca|tampa|bateria|pilhas)",
        r"(?:pedi|encomendei|comprei) (?:\d+|dois|duas|tres|quatro)[^.?!]{0,40}(?:so|apenas"
        r"|somente) (?:veio|vieram|chegou|chegaram|recebi)",
    ),
    "address_change": (
        r"(?:mudar|alterar|corrigir|trocar|atualizar|actualizar|modificar|editar|rectificar"
        r"|retificar|mudanca|alteracao|correcao|troca|atualizacao|actualizacao|mudem|alterem"
        r"|corrijam|altere|mude|corrija) (?:de |da |do |o |a )?(?:\w+ ){0,2}(?:endereco|morada"
        r"|cep|codigo postal|local de entrega)(?! (?:de |do )?(?:e-?mail|eletronico|electronico))",
        r"(?:novo|nova|outro|outra) (?:endereco|morada)(?! (?:de )?(?:e-?mail|eletronico|electronico))",
        r"(?:endereco|morada|cep|codigo postal|numero da porta)s? (?:\w+ )?(?:errad|incorret"
        r"|desatualizad|antig|mal escrit|com erro|trocad)",
        r"(?:enviar|entregar|mandar|enviem|entreguem|mandem|envie|entregue|enviarem|entregarem)"
        r" (?:\w+ ){0,3}(?:para|pra|na|no|a) (?:outro|outra|nova|novo|este|esta|seguinte|minha"
        r"|meu) (?:endereco|morada|local|casa|apartamento|trabalho|escritorio|sede)",
        r"(?:mudei|mudamos|mudar) de (?:casa|endereco|morada)",
        r"(?:errei|enganei-me|me enganei|engano|erro) (?:\w+ ){0,3}(?:endereco|morada|cep"
        r"|codigo postal)",
        r"(?:endereco|morada) (?:certo|correto|correcto|novo|atualizado|actualizado|correta"
        r"|correcta) (?:e|:)",
        r"(?:entregar|entregue|enviar|envie) (?:\w+ ){0,2}(?:no|na|num|numa) (?:ponto de recolha"
        r"|ponto de retirada|loja|cacifo|locker) (?:em vez|ao inves)",
    ),
    "unauthorized_order": (
        r"(?:alguem|alguém) (?:\w+ ){0,2}(?:invadiu|entrou n[ao]|acessou|hackeou|usou) (?:a |minha |na |em )?(?:minha )?conta",
        r"(?:nunca|nao|não) (?:\w+ ){0,1}fiz (?:\w+ ){0,2}(?:pedido|compra|encomenda)?",
        r"nao (?:fiz|efetuei|efectuei|realizei|autorizei|solicitei)"
        r" (?:\w+ )?(?:compra|encomenda|pedido|cobranca|pagamento|transacao|debito|essa|esta"
        r"|este|esse|isto|isso)",
        r"nao (?:reconheco|reconhecemos|reconheci)",
        r"nao autorizei",
        r"nao (?:encomendei|comprei|pedi) nada",
        r"nao (?:encomendei|comprei|pedi) (?:esta|essa|nenhuma) (?:compra|encomenda)",
        # "não fui eu que fiz esta compra"; not "não fui eu que perdi" (a part lost in transit).
        r"nao fui eu(?! (?:que|quem) (?:perdi|parti|estraguei|abri|danifiquei|quebrei))",
        r"desconhec\w* (?:esta|essa|este|esse|a|o|uma|um) (?:compra|cobranca|encomenda|pedido"
        r"|transacao|debito|pagamento)",
        r"(?:compra|cobranca|transacao|debito|encomenda|pedido|movimento)s? (?:\w+ )?"
        r"(?:desconhecid|nao autorizad|indevid|fraudulent|suspeit|que nao fiz|que nao reconheco)",
        r"(?:conta|email|e-mail|perfil|cartao|senha|palavra-passe) (?:\w+ ){0,2}(?:hackead"
        r"|hackerad|invadid|piratead|comprometid|roubad|clonad|violad)",
        # Not "os pontos não entraram na minha conta": points that were never credited.
        r"(?<!nao )(?<!pontos )(?:hackearam|hackaram|invadiram|piratearam|roubaram|clonaram|entraram) (?:\w+ ){0,2}"
        r"(?:conta|cartao|email|e-mail|senha|palavra-passe|dados)",
        r"hacke?(?:ad|ar|aram|ers?\b)",
        r"(?:alguem|outra pessoa|terceiros|um estranho) (?:\w+ ){0,3}(?:usou|utilizou|entrou"
        r"|acedeu|acessou|mexeu) (?:\w+ ){0,2}(?:conta|cartao|dados|perfil)",
        r"(?:alguem|outra pessoa|terceiros|um estranho) (?:\w+ ){0,3}(?:fez|comprou|encomendou"
        r"|pediu) (?:\w+ ){0,2}(?:compras?|encomendas?|pedidos?)",
        r"sem (?:a minha|minha|o meu|meu) (?:autorizacao|consentimento|conhecimento|permissao)",
        r"fraudulent",
        r"(?:vitima de|suspeita de|tentativa de|caso de) (?:fraude|golpe|burla|phishing)",
        r"fraude (?:no|na|com o|com a) (?:meu |minha )?(?:cartao|conta)",
        r"(?:senha|palavra-passe|password|email|e-mail) (?:\w+ ){0,2}(?:alterad|mudad|trocad)"
        r"[^.?!]{0,20}sem",
        r"acesso (?:nao autorizado|indevido|estranho)",
        r"(?:encomenda|pedido|compra)s? (?:\w+ )?que (?:eu )?nao (?:fiz|fizemos|pedi|encomendei)",
    ),
    "invoice": (
        r"(?:enviar|enviem|envie|mandar|mandem|mande|emitir|emitam|emita|emissao|preciso|precisava"
        r"|gostaria|queria|pedir|receber|obter|descarregar|baixar|onde|como|falta|segunda via)"
        r"[^.?!]{0,25}(?:fatura|factura|recibo|nota fiscal|comprovante|comprovativo|nf-?e\b)"
        r"(?![^.?!]{0,15}cartao)",
        r"nota fiscal",
        r"nf-?e\b",
        r"(?:fatura|factura)[- ]recibo",
        r"recibo",
        r"segunda via",
        r"(?:fatura|factura)s? (?:com|de|e) (?:iva|nif|contribuinte|cnpj|cpf)",
        r"(?:fatura|factura)[^.?!]{0,30}(?:nif|numero de contribuinte|cnpj|cpf|iva)",
        r"(?:com|colocar|incluir|adicionar|acrescentar|por) (?:o )?(?:meu )?(?:nif|numero de"
        r" contribuinte|numero fiscal|cnpj)",
        r"iva discriminado",
        r"(?:fatura|factura)s? (?:da|de|do|para a|referente|relativa) (?:a |ao )?(?:minha |meu )?"
        r"(?:encomenda|compra|pedido)",
        r"(?:fatura|factura) (?:em nome|com os (?:meus )?dados|detalhada|discriminada)",
    ),
    "loyalty_points": (
        r"pontos (?:de )?(?:fidelidade|fidelizacao|recompensa|bonus|acumulados|da conta|do programa"
        r"|ganhos|do clube|de cliente)",
        r"(?:meus|os meus|nossos) pontos",
        r"saldo de pontos",
        r"(?:resgatar|trocar|usar|utilizar|descontar|acumular|ganhar|creditar|somar|converter"
        r"|perdi|perder) (?:os |meus |os meus |esses |estes )?pontos",
        r"pontos (?:\w+ )?(?:nao (?:foram |)(?:creditad|atribuid|somad|acumulad|adicionad"
        r"|contabilizad|aparecem|entraram|caira|cairam)|em falta|que faltam|expirad|sumiram)",
        r"programa de (?:fidelidade|fidelizacao|pontos|recompensas|vantagens)",
        r"(?:cartao|clube) (?:de )?(?:fidelidade|cliente)",
        r"fidelizac",
        r"cashback",
        r"milhas",
        r"recompensas",
        r"loyalty",
    ),
    "payment_declined": (
        r"(?:cartao|pagamento|compra|transacao|mbway|mb way|pix|boleto|paypal|multibanco)s? "
        r"(?:\w+ ){0,2}(?:recusad|negad|rejeitad|nao autorizad|nao aprovad|nao passa|nao passou"
        r"|nao foi aceite|nao foi aceito|nao e aceite|nao aceite|falhou|falha|deu erro|com erro"
        r"|bloquead|declinad|nao foi processad|nao processa|nao foi concluid|nao conclui"
        r"|nao funciona)",
        r"(?:recusaram|recusou|rejeitou|rejeitaram|negou|negaram|bloquearam|bloqueou)(?: o| a)?"
        r" (?:meu |minha |o meu |a minha )?(?:cartao|pagamento|compra)",
        r"(?:nao consigo|nao consegui|impossivel|nao da para|nao deixa) (?:\w+ ){0,2}(?:pagar"
        r"|finalizar|concluir|fechar|efetuar|efectuar|completar) (?:a |o )?(?:compra|pagamento"
        r"|pedido|encomenda|checkout)",
        r"(?:nao consigo|nao consegui) pagar",
        r"(?:erro|falha|problema) (?:no|de|ao|do|na) (?:pagamento|pagar|checkout|finalizar"
        r"|finalizacao)",
        r"pagamento (?:falhad|recusad|rejeitad|negad)",
        r"(?:saldo|fundos) insuficientes?",
        r"(?:cartao|pagamento)[^.?!]{0,30}(?:nao (?:e |foi )?aceite|nao aceita|nao aceitam"
        r"|nao (?:e |foi )?aceito)",
        r"transacao (?:\w+ )?(?:negada|recusada|nao autorizada|cancelada|falhou)",
        r"declined",
    ),
    "subscription": (
        r"assinatura(?! (?:digital|eletronica|electronica|do email|do e-mail|de email|na entrega"
        r"|de entrega|do recibo|do recetor|do destinatario|do cliente))",
        r"subscric",
        r"subscription",
        r"renova(?:cao|r|ram|da|do|u) (?:\w+ ){0,2}(?:automatica|automaticamente|sozinh|sem)",
        r"renovacao automatica",
        r"renova\w* automatic",
        r"auto-?renova",
        r"(?:cobranca|debito|pagamento|cobrancas|debitos)s? (?:\w+ )?(?:recorrente|mensal|anual"
        r"|automatic)",
        r"mensalidade",
        r"plano (?:mensal|anual|premium|pro|familia|familiar|de assinatura|plus)",
        r"(?:cancelar|pausar|suspender|interromper|congelar|renovar|parar) (?:a |o |minha |meu "
        r"|a minha |o meu )?(?:assinatura|subscricao|plano|mensalidade|renovacao|clube)",
        r"pausar",
        r"(?:sou |ser )?(?:assinante|subscritor)",
    ),
}
